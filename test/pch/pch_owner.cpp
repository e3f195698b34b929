// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Owner of the test executables' shared precompiled header (see
// test/CMakeLists.txt): CMake builds the header with this object library,
// whose only source must exist but needs no code.
