// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Gives memory from ::operator new(size) back, sized where the compiler
// has sized deallocation (clang before 19 enables it only with
// -fsized-deallocation).
#pragma once

#include <cstddef>
#include <new>

namespace chronopool::detail {

inline void sized_delete(void* p, [[maybe_unused]] std::size_t size) noexcept {
#if defined(__cpp_sized_deallocation)
  ::operator delete(p, size);
#else
  ::operator delete(p);
#endif
}

}  // namespace chronopool::detail
