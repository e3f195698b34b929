// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "report.hpp"

#include "stats.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace bench {
namespace {

/// Three or four significant digits without exponents: tables are read.
std::string number(double v) {
  if (std::isnan(v)) return "-";
  const double a = std::fabs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

std::vector<double> values_of(const std::vector<run_result>& runs, std::size_t figure_index) {
  std::vector<double> out;
  for (const auto& r : runs)
    if (figure_index < r.figures.size()) out.push_back(r.figures[figure_index].value);
  return out;
}

/// Median over repetitions of mine[r] / peer[r], pairing the runs of one
/// repetition (they ran back to back).
double median_ratio(const std::vector<double>& mine, const std::vector<double>& peer) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < mine.size() && r < peer.size(); ++r)
    if (peer[r] != 0) ratios.push_back(mine[r] / peer[r]);
  return median(ratios);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

}  // namespace

void print_header(std::FILE* out, const run_context& ctx, const options& o) {
  const auto& m = ctx.machine;
  fmt::print(out, "# chronopool-bench\n\n");
  fmt::print(out, "- command: `{}`\n", o.command_line);
  fmt::print(out, "- machine: {} cores, {}\n", m.cores, m.cpu);
  fmt::print(out, "- compiler: g++ {}; Boost {}; build: {}\n", m.compiler, m.boost, m.build);
  fmt::print(out, "- date: {}; threads T={}; {} repetitions after one warm-up{}\n", m.date, o.threads, o.reps,
             o.quick ? "; --quick sizes" : "");
  fmt::print(out, "- load average at start: {}\n", ctx.load_before);
  fmt::print(out,
             "- spin floor: a thread only reading the clock for {:.1f} s stalled {:.0f} times/s over 10 us (longest "
             "{:.0f} us): {:.2f} % of evenly spread deadlines would be over 10 us late however they are polled for; "
             "{} threads reading it at once all stalled together {:.0f} times/s: {:.2f} % would be over 10 us late "
             "for every one of them (the floor for threads that stand in for each other)\n\n",
             ctx.floor.seconds, ctx.floor.stalls_over_10us, ctx.floor.longest_us, ctx.floor.late_over_10us_pct,
             ctx.floor.threads_together, ctx.floor.stalled_together_per_s, ctx.floor.late_for_all_pct);
  fmt::print(out,
             "Variants: asio-io = boost::asio::steady_timer on an io_context run by T threads; cp-io = "
             "chronopool::steady_timer there; asio-pool = Asio's timer on asio::thread_pool(T); cp-pool = "
             "chronopool on scheduled_thread_pool(T); cp-io-pool = chronopool::steady_timer on the io_context, its "
             "waits kept by a one-thread scheduled_thread_pool (use_pool); cp-precise = cp-pool in precision mode "
             "(precision_spin_limit {} us), cp-io-precise = cp-io in precision mode (set_poll_window {} us), both in "
             "fire, periodic and sleep only; cp-pool-task = the pool's own delayed tasks on scheduled_thread_pool(T), "
             "pool-task only. Lower is better except where marked (higher). ratio = median over repetitions of "
             "chronopool / its peer (io, io-pool and io-precise vs asio-io, pool and precise vs asio-pool, "
             "pool-task vs cp-pool: tasks against timers on the same kind of pool).\n",
             bench::precise_spin_limit.count(), bench::precise_spin_limit.count());
  std::fflush(out);
}

void print_tables(std::FILE* out, const std::vector<case_result>& results, const options&) {
  for (const auto& cr : results) {
    const bench_case& c = *cr.spec;
    fmt::print(out, "\n## {} {}\n\n", c.workload, c.label);
    fmt::print(out, "| figure | variant | median | min | max | ratio to peer |\n");
    fmt::print(out, "|---|---|---:|---:|---:|---:|\n");
    if (cr.runs.empty() || cr.runs.front().empty()) continue;
    const auto& figures = cr.runs.front().front().figures;
    for (std::size_t f = 0; f < figures.size(); ++f) {
      const std::string fname = figures[f].name + (figures[f].higher_is_better ? " (higher)" : "");
      for (std::size_t i = 0; i < c.variants.size(); ++i) {
        const variant v = c.variants[i];
        const auto vals = values_of(cr.runs[i], f);
        const summary s = summarize(vals);
        std::string ratio;
        if (is_chronopool(v)) {
          for (std::size_t j = 0; j < c.variants.size(); ++j)
            if (c.variants[j] == peer_of(v)) ratio = number(median_ratio(vals, values_of(cr.runs[j], f)));
        }
        fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", i == 0 ? fname : "", name(v), number(s.median),
                   number(s.min), number(s.max), ratio);
      }
    }
  }
  std::fflush(out);
}

void print_footer(std::FILE* out, const run_context& ctx) {
  fmt::print(out, "\nload average at end: {}; total {:.0f} s\n", ctx.load_after, ctx.seconds);
  std::fflush(out);
}

void write_json(const std::string& path, const run_context& ctx, const std::vector<case_result>& results,
                const options& o) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw std::runtime_error("cannot write " + path);
  const auto& m = ctx.machine;
  fmt::print(f.get(), "{{\n  \"meta\": {{\"command\": {}, \"cores\": {}, \"cpu\": {}, \"compiler\": {}, ",
             json_string(o.command_line), m.cores, json_string(m.cpu), json_string(m.compiler));
  fmt::print(f.get(), "\"boost\": {}, \"build\": {}, \"date\": {}, \"threads\": {}, \"reps\": {}, \"quick\": {}, ",
             json_string(m.boost), json_string(m.build), json_string(m.date), o.threads, o.reps, o.quick);
  fmt::print(f.get(), "\"spin_floor\": {{\"seconds\": {}, \"stalls_over_10us_per_s\": {}, \"longest_us\": {}, ",
             json_number(ctx.floor.seconds), json_number(ctx.floor.stalls_over_10us), json_number(ctx.floor.longest_us));
  fmt::print(f.get(), "\"late_over_10us_pct\": {}, \"threads_together\": {}, \"stalled_together_per_s\": {}, ",
             json_number(ctx.floor.late_over_10us_pct), ctx.floor.threads_together,
             json_number(ctx.floor.stalled_together_per_s));
  fmt::print(f.get(), "\"late_for_all_pct\": {}}}, ", json_number(ctx.floor.late_for_all_pct));
  fmt::print(f.get(), "\"load_before\": {}, \"load_after\": {}, \"seconds\": {}}},\n  \"cases\": [",
             json_string(ctx.load_before), json_string(ctx.load_after), json_number(ctx.seconds));
  const char* case_sep = "\n";
  for (const auto& cr : results) {
    const bench_case& c = *cr.spec;
    fmt::print(f.get(), "{}    {{\"workload\": {}, \"case\": {}, \"runs\": [", case_sep, json_string(c.workload),
               json_string(c.label));
    const char* run_sep = "\n";
    for (std::size_t i = 0; i < c.variants.size(); ++i) {
      for (std::size_t r = 0; r < cr.runs[i].size(); ++r) {
        const run_result& rr = cr.runs[i][r];
        fmt::print(f.get(), "{}      {{\"variant\": \"{}\", \"rep\": {}, \"figures\": {{", run_sep, name(c.variants[i]),
                   r);
        for (std::size_t k = 0; k < rr.figures.size(); ++k)
          fmt::print(f.get(), "{}{}: {}", k == 0 ? "" : ", ", json_string(rr.figures[k].name),
                     json_number(rr.figures[k].value));
        fmt::print(f.get(), "}}");
        if (!rr.cdf.empty()) {
          fmt::print(f.get(), ", \"lateness_cdf_us\": [");
          for (std::size_t k = 0; k < rr.cdf.size(); ++k)
            fmt::print(f.get(), "{}[{}, {}]", k == 0 ? "" : ", ", rr.cdf[k].first, json_number(rr.cdf[k].second));
          fmt::print(f.get(), "]");
        }
        fmt::print(f.get(), "}}");
        run_sep = ",\n";
      }
    }
    fmt::print(f.get(), "\n    ]}}");
    case_sep = ",\n";
  }
  fmt::print(f.get(), "\n  ]\n}}\n");
  if (std::ferror(f.get())) throw std::runtime_error("error writing " + path);
}

}  // namespace bench
