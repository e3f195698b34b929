// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Thread names on Linux: pthread_setname_np, which keeps 15 bytes
// (TASK_COMM_LEN - 1). See detail/platform/thread_naming.hpp.
#include <chronopool/detail/platform/thread_naming.hpp>

#include <pthread.h>

namespace chronopool::detail::platform {

namespace {
constexpr std::size_t name_limit = 15;
}  // namespace

void set_current_thread_name(std::string_view name) noexcept {
  char buf[name_limit + 1] = {};
  name.copy(buf, name_limit);
  ::pthread_setname_np(::pthread_self(), buf);
}

std::string current_thread_name() {
  char buf[64] = {};
  if (::pthread_getname_np(::pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

std::size_t max_thread_name_length() noexcept { return name_limit; }

}  // namespace chronopool::detail::platform
