# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Debian packages of the install components (see the install section of the
# top-level CMakeLists.txt), one .deb per component:
#   libchronopool-dev         component dev:     the library, its headers, the
#                             CMake package and chronopool.pc
#   libchronopool-durable-dev component durable: chronopool::durable (only when
#                             it is built), depends on libchronopool-dev and hiredis
# Build them in the build directory with: cpack -G DEB
# The packages install under /usr; CMAKE_INSTALL_LIBDIR decides lib/ or
# lib/<multiarch>/ (configure with -DCMAKE_INSTALL_PREFIX=/usr for the latter).
# Both the CMake package and chronopool.pc are relocatable, so an extracted
# package (dpkg-deb -x) is usable from wherever it lands.

set(CHRONOPOOL_PACKAGE_MAINTAINER "The chronopool authors"
  CACHE STRING "Maintainer field of the Debian packages (\"Name <email>\")")
set(CHRONOPOOL_PACKAGE_HOMEPAGE "" CACHE STRING "Homepage field of the Debian packages (empty: none)")

set(_chronopool_deb_dev libchronopool-dev)
set(_chronopool_deb_durable libchronopool-durable-dev)
set(_chronopool_deb_prometheus libchronopool-prometheus-dev)

# Debian wants the licence as /usr/share/doc/<package>/copyright.
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE"
  DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_chronopool_deb_dev}"
  RENAME copyright COMPONENT dev)
set(_chronopool_components dev)
if(CHRONOPOOL_BUILD_DURABLE)
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_chronopool_deb_durable}"
    RENAME copyright COMPONENT durable)
  list(APPEND _chronopool_components durable)
endif()
if(CHRONOPOOL_BUILD_PROMETHEUS)
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_chronopool_deb_prometheus}"
    RENAME copyright COMPONENT prometheus)
  list(APPEND _chronopool_components prometheus)
endif()

set(CPACK_PACKAGE_NAME chronopool)
set(CPACK_PACKAGE_VENDOR "The chronopool authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Java's ScheduledThreadPoolExecutor for C++20 and Boost.Asio")
set(CPACK_PACKAGE_CONTACT "${CHRONOPOOL_PACKAGE_MAINTAINER}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
# The DEB generator installs under /usr (its default CPACK_PACKAGING_INSTALL_PREFIX;
# set here, it would also move the source tarball's files under usr/).
set(CPACK_GENERATOR DEB)
# Only the components named here: the internal targets install nothing else.
set(CPACK_COMPONENTS_ALL ${_chronopool_components})
# include(CPack) also writes the package_source target: keep build trees and
# git's files out of a source tarball.
set(CPACK_SOURCE_GENERATOR TGZ)
# Regexes, escaped twice: CPack writes them into a quoted string of CPackConfig.cmake.
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/\\\\.git$" "/build/" "/_CPack_Packages/")

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # <name>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CHRONOPOOL_PACKAGE_MAINTAINER}")
if(CHRONOPOOL_PACKAGE_HOMEPAGE)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${CHRONOPOOL_PACKAGE_HOMEPAGE}")
endif()
# Dependencies are written out (no dpkg-shlibdeps): the library is static by
# default and what a user needs are the -dev packages of the public dependencies.
# Debian 12's libboost-dev is 1.74, so 1.81 comes from libboost1.81-dev there.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${_chronopool_deb_dev})
# Built on standalone Asio (CHRONOPOOL_STANDALONE_ASIO), Debian 12's libasio-dev (1.22.1) instead.
if(CHRONOPOOL_STANDALONE_ASIO)
  set(_chronopool_deb_asio "libasio-dev (>= 1:1.22.1)")
else()
  set(_chronopool_deb_asio "libboost-dev (>= 1.81) | libboost1.81-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "${_chronopool_deb_asio}, libfmt-dev, libhowardhinnant-date-dev, tzdata")
set(CPACK_COMPONENT_DEV_DISPLAY_NAME "chronopool")
# CPackDeb writes CPACK_PACKAGE_DESCRIPTION_SUMMARY as the synopsis line of
# both packages, then these as the extended descriptions.
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "A scheduled thread pool, timers and periodic work for Boost.Asio: the library,
its headers, the CMake package (find_package(chronopool)) and chronopool.pc.")

set(CPACK_DEBIAN_DURABLE_PACKAGE_NAME ${_chronopool_deb_durable})
set(CPACK_DEBIAN_DURABLE_PACKAGE_DEPENDS
  "${_chronopool_deb_dev} (= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}), libhiredis-dev, libssl-dev")
set(CPACK_COMPONENT_DURABLE_DISPLAY_NAME "chronopool::durable")
set(CPACK_COMPONENT_DURABLE_DESCRIPTION
  "chronopool::durable: schedules that survive a crash and are shared by
several processes, kept in Redis through hiredis. The library and its headers;
with it installed, find_package(chronopool) provides chronopool::durable.")
set(CPACK_COMPONENT_DURABLE_DEPENDS dev)

set(CPACK_DEBIAN_PROMETHEUS_PACKAGE_NAME ${_chronopool_deb_prometheus})
set(CPACK_DEBIAN_PROMETHEUS_PACKAGE_DEPENDS
  "${_chronopool_deb_dev} (= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}), prometheus-cpp-dev")
set(CPACK_COMPONENT_PROMETHEUS_DISPLAY_NAME "chronopool::prometheus")
set(CPACK_COMPONENT_PROMETHEUS_DESCRIPTION
  "chronopool::prometheus: a prometheus-cpp collector of chronopool's pool,
timer and durable figures, read at each scrape. The library and its headers;
with it installed, find_package(chronopool) provides chronopool::prometheus.")
set(CPACK_COMPONENT_PROMETHEUS_DEPENDS dev)

include(CPack)
