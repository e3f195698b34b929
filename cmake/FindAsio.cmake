# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Finds standalone Asio, header-only (Debian's libasio-dev ships neither a
# CMake package nor a .pc file) and defines the imported target Asio::asio.
# Sets Asio_FOUND and Asio_VERSION (from ASIO_VERSION in asio/version.hpp);
# honours a version given to find_package(Asio <version>).
find_path(Asio_INCLUDE_DIR asio.hpp)
if(Asio_INCLUDE_DIR AND EXISTS "${Asio_INCLUDE_DIR}/asio/version.hpp")
  file(STRINGS "${Asio_INCLUDE_DIR}/asio/version.hpp" _asio_version_line REGEX "^#define ASIO_VERSION [0-9]+")
  if(_asio_version_line MATCHES "ASIO_VERSION ([0-9]+)")
    # XXYYZZ: major XX, minor YY, patch ZZ (102201 is 1.22.1).
    math(EXPR _asio_major "${CMAKE_MATCH_1} / 100000")
    math(EXPR _asio_minor "${CMAKE_MATCH_1} / 100 % 1000")
    math(EXPR _asio_patch "${CMAKE_MATCH_1} % 100")
    set(Asio_VERSION "${_asio_major}.${_asio_minor}.${_asio_patch}")
  endif()
  unset(_asio_version_line)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Asio
  REQUIRED_VARS Asio_INCLUDE_DIR
  VERSION_VAR Asio_VERSION)
if(Asio_FOUND AND NOT TARGET Asio::asio)
  add_library(Asio::asio INTERFACE IMPORTED)
  set_target_properties(Asio::asio PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Asio_INCLUDE_DIR}")
  # Asio's separately compiled or header-only modes are its own defaults
  # (header-only; standalone whenever the compiler has C++11).
  find_package(Threads QUIET)
  if(TARGET Threads::Threads)
    set_target_properties(Asio::asio PROPERTIES INTERFACE_LINK_LIBRARIES Threads::Threads)
  endif()
endif()
mark_as_advanced(Asio_INCLUDE_DIR)
