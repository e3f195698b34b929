// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where the stress ledgers report what went wrong: every violation is counted,
// the first few are kept with their text for the log.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace stress {

class violation_log {
 public:
  void add(const std::string& what) {
    std::lock_guard lock(mutex_);
    ++count_;
    if (first_.size() < 10) first_.push_back(what);
  }
  std::uint64_t count() const {
    std::lock_guard lock(mutex_);
    return count_;
  }
  std::vector<std::string> first() const {
    std::lock_guard lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t count_ = 0;
  std::vector<std::string> first_;
};

}  // namespace stress
