// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A main() for the fuzz targets in builds without libFuzzer: runs
// LLVMFuzzerTestOneInput once on every file named on the command line (or
// found in a directory named there), so the seed corpus is a regression test
// under any compiler and sanitizer. A mismatch aborts, as under the fuzzer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::size_t replay_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) inputs += replay_file(entry.path());
    } else {
      inputs += replay_file(arg);
    }
  }
  LLVMFuzzerTestOneInput(nullptr, 0);  // the empty input, always
  std::printf("replayed %zu inputs (+ the empty one)\n", inputs);
  return inputs > 0 ? 0 : 1;
}
