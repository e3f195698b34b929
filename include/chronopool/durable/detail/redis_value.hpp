// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One decoded Redis reply (RESP2), independent of hiredis's types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::durable::detail {

struct redis_value {
  enum class kind { nil, integer, string, status, error, array };

  kind type = kind::nil;
  std::int64_t integer = 0;
  std::string str;  ///< payload of string, status and error replies
  std::vector<redis_value> elements;  ///< array replies

  bool is_nil() const noexcept { return type == kind::nil; }
  bool is_error() const noexcept { return type == kind::error; }
  bool is_array() const noexcept { return type == kind::array; }
  bool is_integer() const noexcept { return type == kind::integer; }
  /// True for string and status replies.
  bool is_text() const noexcept { return type == kind::string || type == kind::status; }
  std::string_view text() const noexcept { return str; }
};

}  // namespace chronopool::durable::detail
