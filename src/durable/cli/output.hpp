// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable's output: aligned tables for people, JSON for scripts
// (--json), the same fields either way.
#pragma once

#include <chronopool/durable/dead_letter.hpp>
#include <chronopool/durable/schedule_info.hpp>

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chronopool::durable::cli {

/// `s` as a JSON string literal, quotes included; control bytes escaped,
/// other bytes passed through (ids and errors are the user's own bytes).
std::string json_string(std::string_view s);

class printer {
 public:
  printer(std::FILE* out, bool json) : out_(out), json_(json) {}

  void schedules(const std::vector<schedule_summary>& list);
  void details(const schedule_details& d);
  void dead_letters(const std::vector<dead_letter>& list);
  /// The result of a command that changed something: `fields` as a JSON
  /// object (those named in `raw` are numbers or booleans, the others
  /// strings), or `text` as a line.
  void message(std::vector<std::pair<std::string, std::string>> fields, const std::string& text,
               std::initializer_list<std::string_view> raw);

 private:
  std::FILE* out_;
  bool json_;
};

}  // namespace chronopool::durable::cli
