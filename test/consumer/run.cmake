# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Install the chronopool build tree into a temporary prefix, then configure,
# build and run a tiny consumer project against it via find_package(), and
# build and run main.cpp through pkg-config and chronopool.pc.
# Required -D vars: CONSUMER_SOURCE_DIR WORK_DIR, and BUILD_DIR unless SKIP_INSTALL
# Optional -D vars: CONFIG CMAKE_GENERATOR CXX_COMPILER LIBDIR (default lib)
#   PREFIX        where chronopool is installed (default WORK_DIR/prefix; when
#                 given, it must lie outside WORK_DIR, which is wiped first)
#   SKIP_INSTALL  use what is in PREFIX already (package.cmake: extracted .debs)
#   EXPECT_DURABLE  fail unless chronopool::durable is found and linked too
#   EXPECT_PROMETHEUS  fail unless chronopool::prometheus is found, linked and runs
#   EXPECT_STANDALONE_ASIO  chronopool is built on standalone Asio: the consumer
#                 fails to compile unless both the package and chronopool.pc
#                 pass CHRONOPOOL_STANDALONE_ASIO on (and not otherwise)
#   TEST_NAME     the name in the messages (default install_consumer)
if(NOT TEST_NAME)
  set(TEST_NAME install_consumer)
endif()
set(required CONSUMER_SOURCE_DIR WORK_DIR)
if(NOT SKIP_INSTALL)
  list(APPEND required BUILD_DIR)
endif()
foreach(var IN LISTS required)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

if(PREFIX)
  set(prefix "${PREFIX}")
else()
  set(prefix "${WORK_DIR}/prefix")
endif()
if(NOT LIBDIR)
  set(LIBDIR lib)
endif()
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(step name)
  list(JOIN ARGN " " cmdline)
  message(STATUS "${TEST_NAME}: ${name}: ${cmdline}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TEST_NAME}: step '${name}' failed (${rc})")
  endif()
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

if(NOT SKIP_INSTALL)
  step(install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})
endif()

set(configure_args
  -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
  "-DCMAKE_PREFIX_PATH=${prefix}")
if(CMAKE_GENERATOR)
  list(APPEND configure_args -G "${CMAKE_GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CONFIG)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
set(expect_asio_define)
if(EXPECT_STANDALONE_ASIO)
  list(APPEND configure_args "-DEXPECT_STANDALONE_ASIO=ON")
  set(expect_asio_define "-DCHRONOPOOL_CONSUMER_EXPECTS_STANDALONE_ASIO")
endif()
step(configure "${CMAKE_COMMAND}" ${configure_args})
step(build "${CMAKE_COMMAND}" --build "${consumer_build}" --parallel 2 ${config_args})

# The package found must be the one in the prefix, not one elsewhere on the machine.
file(STRINGS "${consumer_build}/CMakeCache.txt" found_dir REGEX "^chronopool_DIR:")
string(REGEX REPLACE "^[^=]*=" "" found_dir "${found_dir}")
file(REAL_PATH "${found_dir}" found_dir)
file(REAL_PATH "${prefix}" real_prefix)
string(FIND "${found_dir}/" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "${TEST_NAME}: find_package found chronopool in ${found_dir}, not under ${prefix}")
endif()

find_program(consumer_exe chronopool_consumer
  PATHS "${consumer_build}" "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH)
if(NOT consumer_exe)
  message(FATAL_ERROR "${TEST_NAME}: chronopool_consumer executable not found")
endif()
step(run "${consumer_exe}")
if(EXPECT_DURABLE)
  find_program(durable_exe chronopool_durable_consumer
    PATHS "${consumer_build}" "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH)
  if(NOT durable_exe)
    message(FATAL_ERROR "${TEST_NAME}: chronopool::durable was not found or not linked (no chronopool_durable_consumer)")
  endif()
endif()
if(EXPECT_PROMETHEUS)
  find_program(prometheus_exe chronopool_prometheus_consumer
    PATHS "${consumer_build}" "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH)
  if(NOT prometheus_exe)
    message(FATAL_ERROR "${TEST_NAME}: chronopool::prometheus was not found or not linked (no chronopool_prometheus_consumer)")
  endif()
  step(run_prometheus "${prometheus_exe}")
endif()

# The same program built through pkg-config and the installed chronopool.pc.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags --libs chronopool
  OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_NAME}: pkg-config does not find chronopool in ${prefix}/${LIBDIR}/pkgconfig")
endif()
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --variable=pcfiledir chronopool
  OUTPUT_VARIABLE pc_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
file(REAL_PATH "${pc_dir}" pc_dir)
string(FIND "${pc_dir}/" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "${TEST_NAME}: pkg-config found chronopool.pc in ${pc_dir}, not under ${prefix}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
set(pc_exe "${WORK_DIR}/chronopool_pkg_config_consumer")
set(pc_cxx "${CXX_COMPILER}")
if(NOT pc_cxx)
  set(pc_cxx c++)
endif()
step(build_with_pkg_config "${pc_cxx}" "${CONSUMER_SOURCE_DIR}/main.cpp" -o "${pc_exe}" ${expect_asio_define} ${pc_flags})
# chronopool.pc gives no run path: a shared libchronopool is found through this.
if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
  set(ENV{LD_LIBRARY_PATH} "${prefix}/${LIBDIR}:$ENV{LD_LIBRARY_PATH}")
else()
  set(ENV{LD_LIBRARY_PATH} "${prefix}/${LIBDIR}")
endif()
step(run_with_pkg_config "${pc_exe}")
message(STATUS "${TEST_NAME}: OK")
