# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
cmake_minimum_required(VERSION 3.25)
# Build the Debian packages of the chronopool build tree with cpack, check
# their names, fields and contents, extract them into one scratch root with
# dpkg-deb -x (no root needed), then build and run the consumer against that
# root through find_package() and pkg-config (run.cmake with SKIP_INSTALL).
# Required -D vars: BUILD_DIR SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR VERSION
#   CORE_FILES     library files of chronopool, "|"-separated (link name, real file)
# Optional -D vars: CONFIG CMAKE_GENERATOR CXX_COMPILER LIBDIR (default lib) CPACK_COMMAND
#   DURABLE_FILES  the same for chronopool_durable; empty when it is not built
#   PROMETHEUS_FILES  the same for chronopool_prometheus; empty when it is not built
#   STANDALONE_ASIO   ON when chronopool is built on standalone Asio: the dev
#                     package then depends on libasio-dev and holds FindAsio.cmake
foreach(var BUILD_DIR SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR VERSION CORE_FILES)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "package.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT LIBDIR)
  set(LIBDIR lib)
endif()
set(packages_dir "${WORK_DIR}/packages")
set(root "${WORK_DIR}/root")
set(prefix "${root}/usr")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${packages_dir}" "${root}")

function(fail)
  list(JOIN ARGN "" text)
  message(FATAL_ERROR "package_consumer: ${text}")
endfunction()

function(step name)
  list(JOIN ARGN " " cmdline)
  message(STATUS "package_consumer: ${name}: ${cmdline}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("step '${name}' failed (${rc})")
  endif()
endfunction()

if(NOT CPACK_COMMAND)
  cmake_path(GET CMAKE_COMMAND PARENT_PATH cmake_bin)
  find_program(CPACK_COMMAND cpack HINTS "${cmake_bin}" NO_CACHE REQUIRED)
endif()
find_program(DPKG_DEB dpkg-deb NO_CACHE REQUIRED)
find_program(DPKG_QUERY dpkg-query NO_CACHE)

# 1. cpack. CPACK_CMAKE_GENERATOR=Ninja: cpack then installs what is built
#    and does not first run the Makefiles' `preinstall` target, which would
#    build every target of the tree (tests, examples, benchmarks) here.
set(cpack_args -G DEB --config "${BUILD_DIR}/CPackConfig.cmake" -B "${packages_dir}")
if(CMAKE_GENERATOR MATCHES "Makefiles")
  list(APPEND cpack_args -D CPACK_CMAKE_GENERATOR=Ninja)
endif()
if(CONFIG)
  list(APPEND cpack_args -C "${CONFIG}")
endif()
step(cpack "${CPACK_COMMAND}" ${cpack_args})

# 2. The packages expected, one per install component, and no others.
set(expected_packages libchronopool-dev)
if(DURABLE_FILES)
  list(APPEND expected_packages libchronopool-durable-dev)
endif()
if(PROMETHEUS_FILES)
  list(APPEND expected_packages libchronopool-prometheus-dev)
endif()
file(GLOB debs RELATIVE "${packages_dir}" "${packages_dir}/*.deb")
list(LENGTH debs n_debs)
list(LENGTH expected_packages n_expected)
if(NOT n_debs EQUAL n_expected)
  fail("expected ${n_expected} packages (${expected_packages}), cpack made ${n_debs}: ${debs}")
endif()

function(deb_field deb field out)
  execute_process(COMMAND "${DPKG_DEB}" -f "${deb}" ${field}
    OUTPUT_VARIABLE value OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("dpkg-deb -f ${deb} ${field} failed (${rc})")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Every file the package holds (not the folders), relative to the root.
function(deb_files deb out)
  execute_process(COMMAND "${DPKG_DEB}" -c "${deb}"
    OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("dpkg-deb -c ${deb} failed (${rc})")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(files)
  foreach(line IN LISTS lines)
    # "-rw-r--r-- root/root 1234 2026-01-01 00:00 ./usr/include/x.hpp" (or "l..." for a symlink)
    if(line MATCHES "^[-l][^ ]* .* \\./([^ ]+)( -> .*)?$")
      list(APPEND files "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

function(require_files package files)
  foreach(f IN LISTS ARGN)
    if(NOT f IN_LIST files)
      fail("${package} lacks ${f}")
    endif()
  endforeach()
endfunction()

# 3. Fields and contents of each package; then extract it into the root.
set(all_files)
foreach(package IN LISTS expected_packages)
  file(GLOB deb "${packages_dir}/${package}_*.deb")
  list(LENGTH deb n)
  if(NOT n EQUAL 1)
    fail("no ${package}_*.deb in ${packages_dir} (found: ${debs})")
  endif()
  message(STATUS "package_consumer: ${deb}")

  deb_field("${deb}" Package name)
  deb_field("${deb}" Version version)
  deb_field("${deb}" Depends depends)
  deb_field("${deb}" Maintainer maintainer)
  deb_field("${deb}" Description description)
  message(STATUS "package_consumer:   ${name} ${version}; Depends: ${depends}")
  if(NOT name STREQUAL package)
    fail("${deb}: Package is '${name}', expected ${package}")
  endif()
  if(NOT version MATCHES "^${VERSION}-[0-9]+$")
    fail("${deb}: Version is '${version}', expected ${VERSION}-<release>")
  endif()
  if(maintainer STREQUAL "" OR description STREQUAL "")
    fail("${deb}: empty Maintainer or Description")
  endif()

  deb_files("${deb}" files)
  set(doc "share/doc/${package}/copyright")
  set(cmake_dir "usr/${LIBDIR}/cmake/chronopool")
  if(package STREQUAL "libchronopool-dev")
    set(required_depends "libfmt-dev" "libhowardhinnant-date-dev" "tzdata")
    set(lib_files "${CORE_FILES}")
    set(required
      "usr/include/chronopool/chronopool.hpp" "usr/include/chronopool/version.hpp"
      "${cmake_dir}/chronopoolConfig.cmake" "${cmake_dir}/chronopoolConfigVersion.cmake"
      "${cmake_dir}/chronopoolTargets.cmake" "usr/${LIBDIR}/pkgconfig/chronopool.pc"
      "usr/${doc}")
    if(STANDALONE_ASIO)
      list(APPEND required_depends "libasio-dev")
      list(APPEND required "${cmake_dir}/FindAsio.cmake")
    else()
      list(APPEND required_depends "libboost1.81-dev")
    endif()
    foreach(f IN LISTS files)
      if(f MATCHES "include/chronopool/durable/|chronopool_durable|Durable|Hiredis")
        fail("${package} holds ${f}, which belongs to libchronopool-durable-dev")
      endif()
      if(f MATCHES "include/chronopool/metrics/|chronopool_prometheus|Prometheus")
        fail("${package} holds ${f}, which belongs to libchronopool-prometheus-dev")
      endif()
    endforeach()
  elseif(package STREQUAL "libchronopool-prometheus-dev")
    set(required_depends "libchronopool-dev (= ${version})" "prometheus-cpp-dev")
    set(lib_files "${PROMETHEUS_FILES}")
    set(required
      "usr/include/chronopool/metrics/prometheus_collector.hpp"
      "${cmake_dir}/chronopoolPrometheusTargets.cmake"
      "usr/${doc}")
  else()
    set(required_depends "libchronopool-dev (= ${version})" "libhiredis-dev" "libssl-dev")
    set(lib_files "${DURABLE_FILES}")
    set(required
      "usr/include/chronopool/durable/scheduler.hpp"
      "${cmake_dir}/chronopoolDurableTargets.cmake" "${cmake_dir}/FindHiredis.cmake"
      "usr/${doc}")
  endif()
  string(REPLACE "|" ";" lib_files "${lib_files}")
  list(REMOVE_DUPLICATES lib_files)
  foreach(f IN LISTS lib_files)
    list(APPEND required "usr/${LIBDIR}/${f}")
  endforeach()
  require_files(${package} "${files}" ${required})

  foreach(d IN LISTS required_depends)
    string(FIND "${depends}" "${d}" at)
    if(at EQUAL -1)
      fail("${package}: Depends '${depends}' lacks '${d}'")
    endif()
  endforeach()
  # Each dependency names a real Debian package: one of its alternatives is
  # installed here (scripts/install-deps installs them), or is built above.
  if(DPKG_QUERY)
    string(REPLACE "," ";" groups "${depends}")
    foreach(group IN LISTS groups)
      string(REPLACE "|" ";" alternatives "${group}")
      set(met FALSE)
      foreach(alt IN LISTS alternatives)
        string(REGEX REPLACE "\\(.*\\)" "" alt "${alt}")
        string(STRIP "${alt}" alt)
        if(alt IN_LIST expected_packages)
          set(met TRUE)
        else()
          execute_process(COMMAND "${DPKG_QUERY}" -W "-f=\${Status}" "${alt}"
            OUTPUT_VARIABLE status ERROR_QUIET)
          if(status MATCHES "install ok installed")
            set(met TRUE)
          endif()
        endif()
      endforeach()
      if(NOT met)
        fail("${package}: no alternative of the dependency '${group}' is installed")
      endif()
    endforeach()
  endif()

  # The packages must not share a file, or dpkg refuses the second one.
  foreach(f IN LISTS files)
    if(f IN_LIST all_files)
      fail("${f} is in more than one package")
    endif()
  endforeach()
  list(APPEND all_files ${files})

  step("extract ${package}" "${DPKG_DEB}" -x "${deb}" "${root}")
endforeach()

# 4. Every public header of the source tree is in a package.
file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/*.hpp")
foreach(h IN LISTS headers)
  if(h MATCHES "^chronopool/durable/" AND NOT DURABLE_FILES)
    continue()
  endif()
  if(h MATCHES "^chronopool/metrics/" AND NOT PROMETHEUS_FILES)
    continue()
  endif()
  if(NOT "usr/include/${h}" IN_LIST all_files)
    fail("no package holds the header include/${h}")
  endif()
endforeach()

# 5. The consumer, against the extracted root: find_package and pkg-config.
set(run_args
  "-DSKIP_INSTALL=ON" "-DTEST_NAME=package_consumer"
  "-DPREFIX=${prefix}" "-DLIBDIR=${LIBDIR}"
  "-DCONSUMER_SOURCE_DIR=${CONSUMER_SOURCE_DIR}"
  "-DWORK_DIR=${WORK_DIR}/consumer")
if(DURABLE_FILES)
  list(APPEND run_args "-DEXPECT_DURABLE=ON")
endif()
if(PROMETHEUS_FILES)
  list(APPEND run_args "-DEXPECT_PROMETHEUS=ON")
endif()
if(STANDALONE_ASIO)
  list(APPEND run_args "-DEXPECT_STANDALONE_ASIO=ON")
endif()
foreach(var CONFIG CMAKE_GENERATOR CXX_COMPILER)
  if(${var})
    list(APPEND run_args "-D${var}=${${var}}")
  endif()
endforeach()
step(consumer "${CMAKE_COMMAND}" ${run_args} -P "${CMAKE_CURRENT_LIST_DIR}/run.cmake")
message(STATUS "package_consumer: OK (${expected_packages})")
