# cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -DSOURCE_DIR=... -P run_consumer.cmake
# Installs the build into WORK_DIR/prefix, then builds and runs the consumer
# project against that prefix alone, twice: with CMake (find_package) and
# with a plain compiler command from `pkg-config --cflags --libs bpg`.
# A shared package must also carry a versioned SONAME and export only the
# public API (check_exports.cmake). docs/packaging.md.
cmake_minimum_required(VERSION 3.16) # policies of a script run with -P
foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR SOURCE_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/bpg/bpg.hpp include/bpg/version.hpp include/bpg/dml.hpp bin/bpg-run
    lib/cmake/bpg/bpgConfig.cmake lib/cmake/bpg/bpgConfigVersion.cmake lib/pkgconfig/bpg.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install tree has no ${f}")
  endif()
endforeach()
set(libdir ${prefix}/lib)

# A consumer needs only what the public headers need: nlohmann-json is
# private to the library and header-only, so no installed package file may
# ask for it.
file(GLOB package_files ${libdir}/cmake/bpg/*.cmake ${libdir}/pkgconfig/bpg.pc)
foreach(f ${package_files})
  file(STRINGS ${f} hits REGEX "nlohmann")
  if(hits)
    message(FATAL_ERROR "${f} asks the consumer for nlohmann-json: ${hits}")
  endif()
endforeach()

# Packages the consumer's CMake must do without: for a shared libbpg.so all of
# bpg's private dependencies, for a static libbpg.a the header-only one.
set(shared OFF)
if(EXISTS ${libdir}/libbpg.so)
  set(shared ON)
  set(absent nlohmann_json TBB dnnl OpenMP)
  set(pc_static "")
else()
  set(absent nlohmann_json)
  set(pc_static --static)
endif()

if(shared)
  # libbpg.so -> libbpg.so.MAJOR (the SONAME) -> libbpg.so.MAJOR.MINOR.PATCH.
  file(STRINGS ${prefix}/include/bpg/version.hpp version_lines REGEX "#define BPG_VERSION_(MAJOR|STRING)")
  string(REGEX MATCH "MAJOR ([0-9]+)" _ "${version_lines}")
  set(major ${CMAKE_MATCH_1})
  string(REGEX MATCH "STRING \"([0-9.]+)\"" _ "${version_lines}")
  set(full ${CMAKE_MATCH_1})
  if(NOT EXISTS ${libdir}/libbpg.so.${full} OR NOT IS_SYMLINK ${libdir}/libbpg.so.${major})
    message(FATAL_ERROR "the install tree has no libbpg.so.${full} behind libbpg.so.${major}")
  endif()
  execute_process(COMMAND objdump -p ${libdir}/libbpg.so OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT dynamic MATCHES "SONAME +libbpg\\.so\\.${major}\n")
    message(FATAL_ERROR "libbpg.so has no SONAME libbpg.so.${major}")
  endif()
  run(${CMAKE_COMMAND} -DLIBRARY=${libdir}/libbpg.so -DHEADERS_DIR=${prefix}/include/bpg
    -DSOURCE_DIR=${SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/check_exports.cmake)
else()
  message(STATUS "static package: the SONAME and export checks need BUILD_SHARED_LIBS=ON")
  run(${CMAKE_COMMAND} -DHEADERS_DIR=${prefix}/include/bpg -DSOURCE_DIR=${SOURCE_DIR}
    -P ${CMAKE_CURRENT_LIST_DIR}/check_exports.cmake)
endif()

# CMake: find_package(bpg) with the packages above made unfindable.
set(disable "")
foreach(p ${absent})
  list(APPEND disable -DCMAKE_DISABLE_FIND_PACKAGE_${p}=ON)
endforeach()
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix} ${disable})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)

# pkg-config: the flags it prints are the whole command line.
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${libdir}/pkgconfig
    pkg-config --cflags --libs ${pc_static} bpg
  OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR pc_flags STREQUAL "")
  message(FATAL_ERROR "pkg-config --cflags --libs ${pc_static} bpg failed (${rc}): '${pc_flags}'")
endif()
message(STATUS "pkg-config --cflags --libs ${pc_static} bpg: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
# Every library directory pkg-config names is the consumer's RPATH, as CMake
# gives its consumer: a static package's oneDNN may sit outside the system's.
set(rpaths -Wl,-rpath,${libdir})
foreach(flag ${pc_flags})
  if(flag MATCHES "^-L(.+)$")
    list(APPEND rpaths -Wl,-rpath,${CMAKE_MATCH_1})
  endif()
endforeach()
find_program(CXX NAMES c++ g++ REQUIRED)
run(${CXX} -std=c++17 ${CONSUMER_DIR}/main.cpp ${pc_flags} ${rpaths}
  -o ${WORK_DIR}/consumer-pkg-config)
run(${WORK_DIR}/consumer-pkg-config)
file(REMOVE_RECURSE ${WORK_DIR})
