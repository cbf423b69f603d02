# cmake -DWORK_DIR=... -DSOURCE_DIR=... -P check_exports_selftest.cmake
# check_exports.cmake on two small libraries with one public header: it must
# pass the one that exports only that header's API and fail the one that
# also exports an internal function, naming it. The header's inline and
# template code is the consumer's: the check must not ask for it; a template
# member's instance (its return type demangled first) is the type's.
cmake_minimum_required(VERSION 3.16) # policies of a script run with -P
foreach(var WORK_DIR SOURCE_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "check_exports_selftest.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(WRITE ${WORK_DIR}/include/bpg/api.hpp
  "#pragma once\n#pragma GCC visibility push(default)\nnamespace bpg {\n\nint answer();\n"
  "class box {\npublic:\n    template <typename T> T get(T v) const;\n};\n"
  "template <typename T>\nT twice(T v) {\n    return v + v;\n}\ninline int one() { return 1; }\n\n} // namespace bpg\n"
  "#pragma GCC visibility pop\n")
file(WRITE ${WORK_DIR}/api.cpp
  "#include \"bpg/api.hpp\"\nnamespace bpg {\nnamespace detail {\nLEAK int helper() { return 42; }\n}\nint answer() { return detail::helper(); }\n"
  "template <typename T> T box::get(T v) const { return v; }\ntemplate int box::get<int>(int) const;\n}\n")
find_program(CXX NAMES c++ g++ REQUIRED)

function(check_library name leak expect_ok)
  execute_process(COMMAND ${CXX} -shared -fPIC -fvisibility=hidden -DLEAK=${leak}
      -I${WORK_DIR}/include ${WORK_DIR}/api.cpp -o ${WORK_DIR}/lib${name}.so RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "could not build lib${name}.so")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -DLIBRARY=${WORK_DIR}/lib${name}.so
      -DHEADERS_DIR=${WORK_DIR}/include/bpg -DSOURCE_DIR=${SOURCE_DIR}
      -P ${CMAKE_CURRENT_LIST_DIR}/check_exports.cmake
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the check refused lib${name}.so, which exports only its API:\n${out}")
  endif()
  if(NOT expect_ok AND (rc EQUAL 0 OR NOT out MATCHES "bpg::detail::helper\\(\\)"))
    message(FATAL_ERROR "the check did not refuse lib${name}.so's bpg::detail::helper():\n${out}")
  endif()
endfunction()

check_library(clean "" ON)
check_library(leaky "__attribute__((visibility(\"default\")))" OFF)
file(REMOVE_RECURSE ${WORK_DIR})
