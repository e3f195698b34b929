// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// <boost/asio/use_future.hpp>, included with GCC 12's false
// -Wmaybe-uninitialized (async_completion inside async_initiate, seen with
// -fsanitize=address) silenced for that header only. Include it before any
// other Asio header.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/asio/use_future.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
