# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Fails unless docs/design.md names every file of src/ and of the library's
# detail/ and impl/ folders, in backquotes, as its file tables do
# (`detail/timer/wait_op.hpp`, `src/pool/pool_core.cpp`).
# Required: -DSOURCE_DIR=<the project's source folder>
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "check_design.cmake: -DSOURCE_DIR=... is required")
endif()
file(READ "${SOURCE_DIR}/docs/design.md" design)
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}/include/chronopool"
  "${SOURCE_DIR}/include/chronopool/detail/*"
  "${SOURCE_DIR}/include/chronopool/impl/*"
  "${SOURCE_DIR}/include/chronopool/durable/detail/*")
file(GLOB_RECURSE src_files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/src/*")
list(APPEND files ${src_files})
set(missing)
foreach(f IN LISTS files)
  string(FIND "${design}" "`${f}`" at)
  if(at EQUAL -1)
    list(APPEND missing "${f}")
  endif()
endforeach()
list(LENGTH files count)
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "docs/design.md does not name these files (add each to its section's table):\n  ${text}")
endif()
message(STATUS "docs/design.md names all ${count} files of src/, detail/ and impl/")
