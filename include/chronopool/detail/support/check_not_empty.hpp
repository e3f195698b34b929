// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The empty-callable check every entry point applies before queueing work.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

namespace chronopool::detail {

/// Throws std::invalid_argument for callables that are empty (a null function
/// pointer, an empty std::function): queueing one would only fail at run time.
template <class F>
void check_not_empty(const F& f, const char* where) {
  bool empty = false;
  if constexpr (std::is_pointer_v<F> || std::is_member_pointer_v<F>) {
    empty = (f == nullptr);
  } else if constexpr (std::is_constructible_v<bool, const F&> && !std::is_convertible_v<const F&, bool>) {
    // Wrappers with an explicit operator bool (std::function and kin). A
    // captureless lambda converts to bool implicitly and is never empty.
    empty = !static_cast<bool>(f);
  }
  if (empty) throw std::invalid_argument(std::string("chronopool: ") + where + ": empty callable");
}

}  // namespace chronopool::detail
