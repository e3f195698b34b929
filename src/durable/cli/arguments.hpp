// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable's command line: what it asks for, parsed by hand (the
// Boost the project requires is header-only, without Program_options), and
// the ISO 8601 times it reads and writes.
#pragma once

#include <chronopool/durable/schedule_spec.hpp>
#include <chronopool/durable/scheduler_options.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::durable::cli {

/// A command line the tool cannot run: exit code 2, with the usage.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct invocation {
  redis_options redis;
  std::string name_space = "default";
  std::uint32_t partitions = 1;  ///< the namespace's partition count
  bool json = false;
  bool help = false;
  std::size_t limit = 100;   ///< list, dead-letters list
  std::string prefix;        ///< list
  /// The command and its operands: {"list"}, {"show", id}, {"backfill", id,
  /// from, to}, {"dead-letters", "redrive", fire id}, ...
  std::vector<std::string> command;
  std::optional<std::chrono::system_clock::time_point> from, to;  ///< backfill
  std::optional<schedule_spec> spec;                              ///< upsert
};

/// Parses argv[1..]. Throws usage_error naming the option or value at fault.
invocation parse(int argc, const char* const* argv);

/// The usage text.
std::string usage();

/// "2026-11-28T21:40:00Z", "2026-11-28T21:40:00.250Z", "...+00:00" or a bare
/// date "2026-11-28" (midnight UTC). Throws usage_error naming `what` and
/// the text otherwise.
std::chrono::system_clock::time_point parse_time(std::string_view text, std::string_view what);

/// "2026-11-28T21:40:00.250Z": UTC, milliseconds.
std::string format_time(std::chrono::system_clock::time_point t);

}  // namespace chronopool::durable::cli
