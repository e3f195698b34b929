// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable upsert's options, gathered into the schedule_spec the
// command writes; durations as the tool reads them ("500ms", "15m").
#pragma once

#include <chronopool/durable/schedule_spec.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace chronopool::durable::cli {

/// A whole number and a unit: ms, s, m, h or d ("500ms", "15m"). Throws
/// usage_error naming `what` and the text otherwise.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what);

class schedule_arguments {
 public:
  /// Takes `option` if it is one of upsert's, reading its value (if it
  /// takes one) with `value`; false for any other option.
  bool take(std::string_view option, const std::function<std::string()>& value);
  /// The first of upsert's options seen, for "only with upsert"; empty if none.
  const std::string& first_option() const noexcept { return first_; }
  /// The schedule `upsert ID TASK` writes: updated in place (created when
  /// missing), or replaced with --replace. Throws usage_error naming what
  /// is missing or contradictory.
  schedule_spec build(std::string id, std::string task) const;

 private:
  void kind(schedule_kind k, std::string_view option);

  std::string first_;
  std::string kind_option_;  // the option that chose the kind
  schedule_spec spec_;
  bool zone_given_ = false;
  bool replace_ = false;
};

}  // namespace chronopool::durable::cli
