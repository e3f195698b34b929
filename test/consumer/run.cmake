# Copyright (c) 2026 The chronopool authors
# SPDX-License-Identifier: BSL-1.0
# Install the chronopool build tree into a temporary prefix, then configure,
# build and run a tiny consumer project against it via find_package().
# Required -D vars: BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR
# Optional -D vars: CONFIG CMAKE_GENERATOR CXX_COMPILER LIBDIR (default lib)
foreach(var BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
if(NOT LIBDIR)
  set(LIBDIR lib)
endif()
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(step name)
  list(JOIN ARGN " " cmdline)
  message(STATUS "install_consumer: ${name}: ${cmdline}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: step '${name}' failed (${rc})")
  endif()
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

step(install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})

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
step(configure "${CMAKE_COMMAND}" ${configure_args})
step(build "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})

find_program(consumer_exe chronopool_consumer
  PATHS "${consumer_build}" "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH)
if(NOT consumer_exe)
  message(FATAL_ERROR "install_consumer: chronopool_consumer executable not found")
endif()
step(run "${consumer_exe}")

# The same program built through pkg-config and the installed chronopool.pc.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags --libs chronopool
  OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install_consumer: pkg-config does not find chronopool in ${prefix}/${LIBDIR}/pkgconfig")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
set(pc_exe "${WORK_DIR}/chronopool_pkg_config_consumer")
set(pc_cxx "${CXX_COMPILER}")
if(NOT pc_cxx)
  set(pc_cxx c++)
endif()
step(build_with_pkg_config "${pc_cxx}" "${CONSUMER_SOURCE_DIR}/main.cpp" -o "${pc_exe}" ${pc_flags})
step(run_with_pkg_config "${pc_exe}")
message(STATUS "install_consumer: OK")
