// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/version.hpp>

#define CHRONOPOOL_STRINGIFY_(x) #x
#define CHRONOPOOL_STRINGIFY(x) CHRONOPOOL_STRINGIFY_(x)

namespace chronopool {

library_version version() noexcept { return version_of_headers; }

const char* version_string() noexcept {
  return CHRONOPOOL_STRINGIFY(CHRONOPOOL_VERSION_MAJOR) "." CHRONOPOOL_STRINGIFY(
      CHRONOPOOL_VERSION_MINOR) "." CHRONOPOOL_STRINGIFY(CHRONOPOOL_VERSION_PATCH);
}

}  // namespace chronopool
