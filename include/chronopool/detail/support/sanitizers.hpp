// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Which sanitizer this translation unit is built with, asked once for both
// compilers: GCC defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang
// answers __has_feature. Code that must behave differently under one (a
// cache that would hide blocks from ASan, a remap TSan cannot follow, tests
// that read glibc's malloc counters) tests these instead of either spelling.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define CHRONOPOOL_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHRONOPOOL_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef CHRONOPOOL_ADDRESS_SANITIZER
#define CHRONOPOOL_ADDRESS_SANITIZER 0
#endif

#if defined(__SANITIZE_THREAD__)
#define CHRONOPOOL_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHRONOPOOL_THREAD_SANITIZER 1
#endif
#endif
#ifndef CHRONOPOOL_THREAD_SANITIZER
#define CHRONOPOOL_THREAD_SANITIZER 0
#endif
