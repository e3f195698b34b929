# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Finds hiredis (Debian's libhiredis-dev ships no CMake target) and defines
# the imported target Hiredis::hiredis. Sets Hiredis_FOUND.
find_path(Hiredis_INCLUDE_DIR hiredis/hiredis.h)
find_library(Hiredis_LIBRARY NAMES hiredis)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Hiredis REQUIRED_VARS Hiredis_LIBRARY Hiredis_INCLUDE_DIR)
if(Hiredis_FOUND AND NOT TARGET Hiredis::hiredis)
  add_library(Hiredis::hiredis UNKNOWN IMPORTED)
  set_target_properties(Hiredis::hiredis PROPERTIES
    IMPORTED_LOCATION "${Hiredis_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Hiredis_INCLUDE_DIR}")
endif()
mark_as_advanced(Hiredis_INCLUDE_DIR Hiredis_LIBRARY)
