// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "usage.hpp"

#include <sys/resource.h>

namespace bench::usage {

sample now() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto ns = [](const timeval& t) {
    return std::int64_t{t.tv_sec} * 1'000'000'000 + std::int64_t{t.tv_usec} * 1'000;
  };
  return {static_cast<std::int64_t>(u.ru_nvcsw), ns(u.ru_utime) + ns(u.ru_stime)};
}

figure meter::cpu_ms() const { return {"CPU ms", static_cast<double>(total_.cpu_ns) / 1e6}; }

figure meter::cpu_ns_per(const std::string& unit, std::size_t ops) const {
  return {"CPU ns/" + unit, static_cast<double>(total_.cpu_ns) / static_cast<double>(ops)};
}

}  // namespace bench::usage
