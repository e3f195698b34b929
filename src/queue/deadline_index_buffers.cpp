// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A deadline index's buffers: the sparse ones given back (marked by erase, shrunk
// by the owner), and the bytes they reserve.
#include <chronopool/detail/queue/deadline_index.hpp>

#include "deadline_index_internal.hpp"

#include <bit>
#include <cstdint>
#include <optional>
#include <utility>

namespace chronopool::detail {

// ---- giving a sparse buffer back ---------------------------------------------------------

deadline_index::node_buffer& deadline_index::buffer_of(const shrink_request& r) noexcept {
  switch (r.in) {
    case shrink_request::where::tier: return tier_[r.bucket];
    case shrink_request::where::stale: return stale_[r.bucket];
    case shrink_request::where::never: break;
  }
  return never_;
}

std::optional<deadline_index::shrink_request> deadline_index::next_shrink() noexcept {
  // A mark names a place, not a buffer: a rebase may have swapped another
  // buffer in since. Whatever is there is shrunk if it is sparse.
  using where = shrink_request::where;
  for (auto [marks, in] : {std::pair{&shrink_tier_, where::tier}, std::pair{&shrink_stale_, where::stale}}) {
    while (*marks != 0) {
      const auto j = static_cast<std::uint8_t>(std::countr_zero(*marks));
      shrink_request r{in, j, 0};
      const auto& v = buffer_of(r);
      if (sparse(v)) {
        r.capacity = shrunk_capacity(v.size());
        return r;
      }
      *marks &= *marks - 1;
    }
  }
  if (shrink_never_) {
    if (sparse(never_)) return shrink_request{where::never, 0, shrunk_capacity(never_.size())};
    shrink_never_ = false;
  }
  return std::nullopt;
}

void deadline_index::shrink(const shrink_request& r, node_buffer& smaller) noexcept {
  using where = shrink_request::where;
  if (r.in == where::never) {
    shrink_never_ = false;
  } else {
    (r.in == where::tier ? shrink_tier_ : shrink_stale_) &= ~(std::uint64_t{1} << r.bucket);
  }
  auto& v = buffer_of(r);
  // Erased from or pushed to since the request: still worth it, and still fits?
  if (!sparse(v) || !smaller.empty() || smaller.capacity() < v.size() || smaller.capacity() >= v.capacity()) return;
  smaller.assign_within_capacity(v.begin(), v.end());
  v.swap(smaller);
  smaller.clear();
}

void deadline_index::shrink_now() noexcept {
  struct no_lock {
    void lock() noexcept {}
    void unlock() noexcept {}
  } none;
  shrink_index_buffers(*this, none);
}
std::size_t deadline_index::reserved_bytes() const noexcept {
  std::size_t n = heap_.capacity() * sizeof(entry) + never_.capacity() * sizeof(index_node*);
  n += run_.capacity() * sizeof(entry);
  n += slot_pool_.reserved_bytes();
  for (const auto* array : {&tier_, &stale_})
    for (const auto& bucket : *array) n += bucket.capacity() * sizeof(index_node*);
  return n;
}

}  // namespace chronopool::detail
