// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Counts the faults the suite injects (an exception thrown by a task or a
// handler, a failed allocation, a throwing move, a destruction with work
// pending), by kind, so the run can say how many it survived.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <string>

namespace fault {

class fault_counter {
 public:
  void add(const std::string& kind, std::uint64_t n = 1) {
    std::lock_guard lock(mutex_);
    by_kind_[kind] += n;
  }
  std::uint64_t total() const {
    std::lock_guard lock(mutex_);
    std::uint64_t sum = 0;
    for (const auto& [kind, n] : by_kind_) sum += n;
    return sum;
  }
  std::string report() const {
    std::ostringstream os;
    os << "faults injected: " << total();
    std::lock_guard lock(mutex_);
    for (const auto& [kind, n] : by_kind_) os << "\n  " << n << "  " << kind;
    return os.str();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> by_kind_;
};

inline fault_counter& counter() {
  static fault_counter c;
  return c;
}

/// Records @p n faults of @p kind.
inline void injected(const std::string& kind, std::uint64_t n = 1) { counter().add(kind, n); }

}  // namespace fault
