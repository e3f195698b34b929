// Owner of the test executables' shared precompiled header (see
// test/CMakeLists.txt): CMake builds the header with this object library,
// whose only source must exist but needs no code.
