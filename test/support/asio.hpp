// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The Asio the library is built on, for the tests: Boost.Asio, or standalone
// Asio with CHRONOPOOL_STANDALONE_ASIO (include/chronopool/detail/config/asio.hpp).
// All of it (it is in the tests' precompiled header), named `asio` in both
// builds (in the standalone one that is Asio's own namespace), and its error
// types as `sys_ns::error_code` and `sys_ns::system_error`.
#pragma once

#include "quiet_use_future.hpp"  // first: before any other Asio header

#include <chronopool/detail/config/asio.hpp>

#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#else
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
namespace asio = boost::asio;
#endif

namespace sys_ns = chronopool::sys_ns;

/// Asio's completion-token adapters that 1.22 keeps in `experimental`.
namespace asio_compat = chronopool::detail::asio_compat;
