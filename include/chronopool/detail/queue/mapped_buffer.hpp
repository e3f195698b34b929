// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A growable array of trivially copyable values for the deadline index: its
// heap, run and far-tier buckets. Buffers of 8 KiB and more are page
// mappings taken from the kernel, never from malloc, and grow by remapping:
// resizing one under the owner's lock neither triggers nor waits for
// malloc's consolidation and copies no bytes, and a freed one goes back to
// the system at once. Smaller buffers come from operator new, where a
// mapping would waste most of a page.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

/// Buffers of this many bytes or more are page mappings.
inline constexpr std::size_t mapped_from = 8 * 1024;

/// Maps @p bytes (rounded up to pages) of zeroed memory; throws std::bad_alloc.
void* map_pages(std::size_t bytes);
/// Unmaps what map_pages(@p bytes) returned (or a mapping buffer_grow() grew to @p bytes).
void unmap_pages(void* p, std::size_t bytes) noexcept;
/// Diagnostics: the bytes mapped by map_pages() and not unmapped yet, in the
/// whole process (what malloc's statistics do not see).
std::size_t mapped_bytes() noexcept;

/// @p bytes from operator new below mapped_from, else a mapping.
void* buffer_allocate(std::size_t bytes);
/// Gives back what buffer_allocate(@p bytes) or buffer_grow(..., @p bytes) returned.
void buffer_deallocate(void* p, std::size_t bytes) noexcept;
/// A buffer of @p new_bytes (more than @p old_bytes) holding the first
/// @p used_bytes of @p p, which it replaces: a mapping is remapped (it may
/// move; nothing is copied), a smaller buffer copied into a new one. Throws
/// std::bad_alloc, leaving @p p as it was.
void* buffer_grow(void* p, std::size_t old_bytes, std::size_t used_bytes, std::size_t new_bytes);

template <class T>
class mapped_buffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "its values move by memcpy and page remapping");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  mapped_buffer() noexcept = default;
  mapped_buffer(const mapped_buffer&) = delete;
  mapped_buffer& operator=(const mapped_buffer&) = delete;
  mapped_buffer(mapped_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)) {}
  mapped_buffer& operator=(mapped_buffer&& o) noexcept {
    mapped_buffer(std::move(o)).swap(*this);
    return *this;
  }
  ~mapped_buffer() {
    if (data_ != nullptr) buffer_deallocate(data_, capacity_ * sizeof(T));
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }

  /// Strong guarantee: when growing fails (std::bad_alloc), nothing changed.
  void push_back(const T& v) {
    if (size_ == capacity_) grow_to(capacity_ < 8 ? 8 : 2 * capacity_);
    data_[size_++] = v;
  }
  void pop_back() noexcept { --size_; }
  /// Keeps the first @p n values (@p n at most size()); the capacity stays.
  void truncate(std::size_t n) noexcept { size_ = n; }
  /// Empties it; the capacity stays.
  void clear() noexcept { size_ = 0; }
  /// Room for at least @p n values. Strong guarantee.
  void reserve(std::size_t n) {
    if (n > capacity_) grow_to(n);
  }
  /// Copies [@p first, @p last) in; they must fit the capacity (no allocation).
  void assign_within_capacity(const T* first, const T* last) noexcept {
    size_ = static_cast<std::size_t>(last - first);
    if (size_ != 0) std::memcpy(data_, first, size_ * sizeof(T));
  }
  void swap(mapped_buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

 private:
  void grow_to(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = data_ == nullptr ? buffer_allocate(n * sizeof(T))
                               : buffer_grow(data_, capacity_ * sizeof(T), size_ * sizeof(T), n * sizeof(T));
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace chronopool::detail
