# BPG_SANITIZE: sanitizers for every target of this build, as -fsanitize= takes
# them (e.g. "address,undefined", or "thread"). Undefined behaviour aborts
# instead of printing and going on, so a UB finding fails the test that hit it.
# BPG_BUILD_FUZZERS adds libFuzzer's coverage instrumentation (clang only) to
# everything, and builds the fuzz targets of fuzz/.
set(BPG_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined")
option(BPG_BUILD_FUZZERS "Build the libFuzzer targets of fuzz/ (clang)" OFF)

if(BPG_SANITIZE)
  # Line tables (-g1) are all a sanitizer report needs, at a third of -g's compile time.
  add_compile_options(-fsanitize=${BPG_SANITIZE} -fno-omit-frame-pointer -g1)
  add_link_options(-fsanitize=${BPG_SANITIZE})
  if(BPG_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  # Every ASan check as a call into the runtime rather than inlined: the same
  # checks, at half the compile time of the always-inline kernels
  # (bench/NOTES.md, "CI time under 60 minutes").
  if(BPG_SANITIZE MATCHES "address" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(--param=asan-instrumentation-with-call-threshold=0)
  endif()
endif()

if(BPG_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BPG_BUILD_FUZZERS needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
