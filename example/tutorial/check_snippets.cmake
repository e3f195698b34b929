# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Every program in example/tutorial/ stands word for word in docs/tutorial.md,
# in a ```cpp block, and the tutorial has no other C++ block: it shows only
# code that is compiled and run as a test.
# Usage: cmake -DSOURCE_DIR=<repository> -P check_snippets.cmake
file(GLOB _steps "${SOURCE_DIR}/example/tutorial/*.cpp")
file(READ "${SOURCE_DIR}/docs/tutorial.md" _md)
set(_fence "```")
set(_failed FALSE)
foreach(_step IN LISTS _steps)
  file(READ "${_step}" _code)
  string(FIND "${_md}" "${_fence}cpp\n${_code}${_fence}" _at)
  if(_at EQUAL -1)
    get_filename_component(_name "${_step}" NAME)
    message(SEND_ERROR "docs/tutorial.md does not show example/tutorial/${_name} as it is")
    set(_failed TRUE)
  endif()
endforeach()
string(REGEX MATCHALL "${_fence}cpp\n" _blocks "${_md}")
list(LENGTH _blocks _block_count)
list(LENGTH _steps _step_count)
if(NOT _block_count EQUAL _step_count)
  message(SEND_ERROR "docs/tutorial.md has ${_block_count} C++ blocks for ${_step_count} programs in example/tutorial/")
  set(_failed TRUE)
endif()
if(NOT _failed)
  message(STATUS "docs/tutorial.md shows all ${_step_count} programs of example/tutorial/")
endif()
