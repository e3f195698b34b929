// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable's tables and JSON.
#include "output.hpp"

#include "arguments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace chronopool::durable::cli {

namespace {

const char* kind_name(schedule_kind k) {
  switch (k) {
    case schedule_kind::one_shot: return "one-shot";
    case schedule_kind::fixed_rate: return "fixed-rate";
    case schedule_kind::fixed_delay: return "fixed-delay";
    case schedule_kind::cron: return "cron";
  }
  return "?";
}

const char* state_name(schedule_state s) {
  switch (s) {
    case schedule_state::active: return "active";
    case schedule_state::paused: return "paused";
    case schedule_state::running: return "running";
  }
  return "?";
}

const char* outcome_name(run_outcome o) {
  switch (o) {
    case run_outcome::succeeded: return "ok";
    case run_outcome::failed: return "failed";
    case run_outcome::dead_lettered: return "dead-lettered";
    case run_outcome::lease_expired: return "lease-expired";
  }
  return "?";
}

std::string period_text(std::chrono::milliseconds p) {
  if (p.count() == 0) return "-";
  if (p.count() % 3600000 == 0) return fmt::format("{}h", p.count() / 3600000);
  if (p.count() % 60000 == 0) return fmt::format("{}m", p.count() / 60000);
  if (p.count() % 1000 == 0) return fmt::format("{}s", p.count() / 1000);
  return fmt::format("{}ms", p.count());
}

// Text for a table cell: control bytes shown as '?', so one value stays on one line.
std::string cell(std::string_view s) {
  std::string out(s);
  for (auto& ch : out)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return out;
}

// The PERIOD column: a cron schedule's expression and zone stand for its period.
std::string when_text(const schedule_summary& s) {
  if (s.kind == schedule_kind::cron) return cell(s.cron + " " + s.time_zone);
  return period_text(s.period);
}

// Rows under a header, each column as wide as its widest cell.
void table(std::FILE* out, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  const auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      s += r[i];
      if (i + 1 < r.size()) s += std::string(width[i] - r[i].size() + 2, ' ');
    }
    fmt::print(out, "{}\n", s);
  };
  line(header);
  for (const auto& r : rows) line(r);
}

std::string summary_json(const schedule_summary& s) {
  return fmt::format(
      "{{\"id\":{},\"task\":{},\"kind\":\"{}\",\"period_ms\":{},\"next_due\":\"{}\",\"eligible\":{},\"state\":\"{}\","
      "\"attempts\":{},\"extra_fires\":{}{}}}",
      json_string(s.id), json_string(s.task), kind_name(s.kind), s.period.count(), format_time(s.next_due),
      s.eligible ? "\"" + format_time(*s.eligible) + "\"" : std::string("null"), state_name(s.state), s.attempts,
      s.extra_fires,
      s.kind == schedule_kind::cron
          ? fmt::format(",\"cron\":{},\"time_zone\":{}", json_string(s.cron), json_string(s.time_zone))
          : std::string());
}

std::vector<std::string> summary_row(const schedule_summary& s) {
  return {cell(s.id),         cell(s.task),         kind_name(s.kind),          when_text(s),
          format_time(s.next_due), state_name(s.state), std::to_string(s.attempts), std::to_string(s.extra_fires)};
}

}  // namespace

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"') out += "\\\"";
    else if (ch == '\\') out += "\\\\";
    else if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04x}", c);
    else out += ch;
  }
  return out + "\"";
}

void printer::schedules(const std::vector<schedule_summary>& list) {
  if (json_) {
    std::string s = "[";
    for (std::size_t i = 0; i < list.size(); ++i) s += (i ? "," : "") + summary_json(list[i]);
    fmt::print(out_, "{}]\n", s);
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : list) rows.push_back(summary_row(e));
  table(out_, {"ID", "TASK", "KIND", "PERIOD", "NEXT DUE (UTC)", "STATE", "ATTEMPTS", "EXTRA"}, rows);
}

void printer::details(const schedule_details& d) {
  const auto& s = d.summary;
  if (json_) {
    std::string runs = "[";
    for (std::size_t i = 0; i < d.history.size(); ++i) {
      const auto& r = d.history[i];
      runs += fmt::format(
          "{}{{\"fire_id\":{},\"due\":\"{}\",\"token\":{},\"started\":{},\"finished\":\"{}\",\"attempt\":{},"
          "\"outcome\":\"{}\",\"error\":{}}}",
          i ? "," : "", json_string(r.fire_id), format_time(r.due), r.token,
          r.started ? "\"" + format_time(*r.started) + "\"" : std::string("null"), format_time(r.finished), r.attempt,
          outcome_name(r.outcome), json_string(r.error));
    }
    std::string extras = "[";
    for (std::size_t i = 0; i < d.extra_fires.size(); ++i)
      extras += fmt::format("{}\"{}\"", i ? "," : "", format_time(d.extra_fires[i]));
    std::string head = summary_json(s);
    head.pop_back();  // the summary's fields, then the details'
    fmt::print(out_,
               "{},\"payload\":{},\"created\":\"{}\",\"runs\":{},\"failures\":{},\"dead_letters\":{},\"last_error\":{},"
               "\"lease_owner\":{},\"lease_expires\":{},\"history_length\":{},\"history\":{}],\"extra_fire_times\":{}]}}\n",
               head, json_string(d.payload), format_time(d.created), d.runs, d.failures, d.dead_letters,
               json_string(d.last_error), json_string(d.lease_owner),
               d.lease_expires ? "\"" + format_time(*d.lease_expires) + "\"" : std::string("null"), d.history_length,
               runs, extras);
    return;
  }
  fmt::print(out_, "id:            {}\ntask:          {}\nkind:          {}\nperiod:        {}\n", cell(s.id),
             cell(s.task), kind_name(s.kind), when_text(s));
  fmt::print(out_, "state:         {}\nnext due:      {}\neligible:      {}\nattempts:      {}\n", state_name(s.state),
             format_time(s.next_due), s.eligible ? format_time(*s.eligible) : "-", s.attempts);
  fmt::print(out_, "created:       {}\nruns:          {}\nfailures:      {}\ndead letters:  {}\n", format_time(d.created),
             d.runs, d.failures, d.dead_letters);
  fmt::print(out_, "last error:    {}\nlease owner:   {}\nlease expires: {}\npayload:       {} bytes\n",
             d.last_error.empty() ? "-" : cell(d.last_error), d.lease_owner.empty() ? "-" : cell(d.lease_owner),
             d.lease_expires ? format_time(*d.lease_expires) : "-", d.payload.size());
  fmt::print(out_, "extra fires:   {}", s.extra_fires);
  for (const auto& x : d.extra_fires) fmt::print(out_, " {}", format_time(x));
  fmt::print(out_, "\nlast runs (newest first, up to {}):\n", d.history_length);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : d.history)
    rows.push_back({cell(r.fire_id), format_time(r.due), r.started ? format_time(*r.started) : "-",
                    format_time(r.finished), std::to_string(r.attempt), outcome_name(r.outcome),
                    r.error.empty() ? "-" : cell(r.error)});
  table(out_, {"FIRE", "DUE", "STARTED", "FINISHED", "ATTEMPT", "OUTCOME", "ERROR"}, rows);
}

void printer::dead_letters(const std::vector<dead_letter>& list) {
  if (json_) {
    std::string s = "[";
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& d = list[i];
      s += fmt::format(
          "{}{{\"fire_id\":{},\"schedule_id\":{},\"task\":{},\"due\":\"{}\",\"attempts\":{},\"last_error\":{},"
          "\"dead_lettered_at\":\"{}\"}}",
          i ? "," : "", json_string(d.fire_id), json_string(d.schedule_id), json_string(d.task), format_time(d.due),
          d.attempts, json_string(d.last_error), format_time(d.dead_lettered_at));
    }
    fmt::print(out_, "{}]\n", s);
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : list)
    rows.push_back({cell(d.fire_id), cell(d.schedule_id), cell(d.task), format_time(d.due), std::to_string(d.attempts),
                    format_time(d.dead_lettered_at), cell(d.last_error)});
  table(out_, {"FIRE", "SCHEDULE", "TASK", "DUE", "ATTEMPTS", "DEAD SINCE", "LAST ERROR"}, rows);
}

void printer::message(std::vector<std::pair<std::string, std::string>> fields, const std::string& text,
                      std::initializer_list<std::string_view> raw) {
  if (!json_) {
    fmt::print(out_, "{}\n", cell(text));
    return;
  }
  std::string s = "{";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const bool is_raw = std::find(raw.begin(), raw.end(), fields[i].first) != raw.end();
    s += fmt::format("{}{}:{}", i ? "," : "", json_string(fields[i].first),
                     is_raw ? fields[i].second : json_string(fields[i].second));
  }
  fmt::print(out_, "{}}}\n", s);
}

}  // namespace chronopool::durable::cli
