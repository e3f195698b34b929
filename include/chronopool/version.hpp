// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// The version of chronopool these headers belong to.
#pragma once

/// Major version: changes that break the API (while it is 0, a minor
/// version may break it too).
#define CHRONOPOOL_VERSION_MAJOR 0
/// Minor version: additions.
#define CHRONOPOOL_VERSION_MINOR 1
/// Patch version: fixes.
#define CHRONOPOOL_VERSION_PATCH 0
/// The version as one number, major * 100000 + minor * 100 + patch (Boost's
/// BOOST_VERSION scheme), for comparisons in the preprocessor.
#define CHRONOPOOL_VERSION \
  (CHRONOPOOL_VERSION_MAJOR * 100000 + CHRONOPOOL_VERSION_MINOR * 100 + CHRONOPOOL_VERSION_PATCH)

/// \namespace chronopool
/// The whole library: the scheduled thread pool, its futures and options,
/// and timers for any Asio executor. Names in chronopool::detail are the
/// implementation, not part of the API.
namespace chronopool {

/// A library version: the headers' (version_of_headers) or the compiled
/// library's (version()).
struct library_version {
  int major;  ///< CHRONOPOOL_VERSION_MAJOR of that version
  int minor;  ///< CHRONOPOOL_VERSION_MINOR of that version
  int patch;  ///< CHRONOPOOL_VERSION_PATCH of that version
  /// Equal when major, minor and patch are all equal.
  friend constexpr bool operator==(const library_version&, const library_version&) = default;
};

/// The version of the headers being compiled.
inline constexpr library_version version_of_headers{CHRONOPOOL_VERSION_MAJOR, CHRONOPOOL_VERSION_MINOR,
                                                    CHRONOPOOL_VERSION_PATCH};

/// The version of the compiled library linked in; differs from
/// version_of_headers only when headers and library come from different
/// installs.
library_version version() noexcept;

/// The compiled library's version as "major.minor.patch".
const char* version_string() noexcept;

}  // namespace chronopool
