// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Captures what this process writes to stderr (file descriptor 2) while an
// object of it lives, for tests of the default log lines.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace test_support {

class stderr_capture {
 public:
  stderr_capture() : file_(std::tmpfile()) {
    if (file_ == nullptr) throw std::runtime_error("stderr_capture: tmpfile failed");
    std::fflush(stderr);
    saved_ = ::dup(2);
    if (saved_ < 0 || ::dup2(::fileno(file_), 2) < 0) {
      std::fclose(file_);
      throw std::runtime_error("stderr_capture: dup failed");
    }
  }
  ~stderr_capture() {
    restore();
    std::fclose(file_);
  }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;

  /// Stops capturing and returns everything written since the start.
  std::string text() {
    restore();
    std::rewind(file_);
    std::string s;
    for (int c; (c = std::fgetc(file_)) != EOF;) s.push_back(static_cast<char>(c));
    return s;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }

  std::FILE* file_;
  int saved_ = -1;
};

}  // namespace test_support
