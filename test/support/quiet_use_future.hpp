// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Asio's use_future.hpp (Boost.Asio's, or standalone Asio's with
// CHRONOPOOL_STANDALONE_ASIO), included with GCC 12's false
// -Wmaybe-uninitialized (async_completion inside async_initiate, seen with
// -fsanitize=address) silenced for that header only. Include it before any
// other Asio header (support/asio.hpp does).
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/use_future.hpp>
#else
#include <boost/asio/use_future.hpp>
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
