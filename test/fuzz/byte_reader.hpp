// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Decodes a fuzzer's bytes into choices. Reading past the end yields zeros,
// so every input, however short, decodes to some operation sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fuzz {

class byte_reader {
 public:
  byte_reader(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

  bool empty() const noexcept { return pos_ >= size_; }

  std::uint8_t byte() noexcept { return pos_ < size_ ? data_[pos_++] : 0; }

  /// The next sizeof(T) bytes, little-endian, zero-padded at the end.
  template <class T>
    requires std::is_integral_v<T>
  T integral() noexcept {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(byte()) << (8 * i);
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));
  }

  /// A choice in [0, n) (n > 0), from one byte.
  std::size_t pick(std::size_t n) noexcept { return n == 0 ? 0 : byte() % n; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace fuzz
