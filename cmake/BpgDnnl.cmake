# oneDNN, optional: BPG_WITH_DNNL is ON when a oneDNN 2.6+ or 3.x is found
# (Debian's libdnnl-dev, or -Ddnnl_DIR=... of another install) and may be
# forced OFF; without it the dnnl backend is not compiled and the library,
# tools and tests run on tbb and ref (docs/onednn-versions.md).
if(NOT DEFINED BPG_WITH_DNNL OR BPG_WITH_DNNL)
  find_package(dnnl CONFIG QUIET)
  set(bpg_dnnl_searched ON)
endif()
option(BPG_WITH_DNNL "Build the dnnl backend (oneDNN 2.6+ or 3.x primitives)" ${dnnl_FOUND})
if(BPG_WITH_DNNL)
  if(NOT dnnl_FOUND)
    message(FATAL_ERROR "bpg: BPG_WITH_DNNL is ON but no oneDNN was found: install libdnnl-dev, "
      "point dnnl_DIR at a oneDNN install's lib/cmake/dnnl, or configure with -DBPG_WITH_DNNL=OFF")
  endif()
  if(dnnl_VERSION VERSION_LESS 2.6 OR NOT dnnl_VERSION VERSION_LESS 4.0)
    message(FATAL_ERROR "bpg: oneDNN ${dnnl_VERSION} found in ${dnnl_DIR}: the dnnl backend needs "
      "oneDNN 2.6 or later 2.x, or 3.x; point dnnl_DIR at another install or configure with -DBPG_WITH_DNNL=OFF")
  endif()
  message(STATUS "bpg: dnnl backend on, oneDNN ${dnnl_VERSION} (${dnnl_DIR})")
elseif(bpg_dnnl_searched)
  message(STATUS "bpg: no oneDNN found: dnnl backend off (BPG_WITH_DNNL=OFF), backends tbb and ref")
else()
  message(STATUS "bpg: dnnl backend off (BPG_WITH_DNNL=OFF): backends tbb and ref")
endif()

# oneDNN's headers reach only the files that include them: its include directories move from
# DNNL::dnnl to BPG_DNNL_COMPILE_OPTIONS, set on those sources. Every other file then compiles
# the same with any oneDNN or none, so that builds against several share one compiler cache
# (.ci/run). BPG_DNNL_INCLUDE_DIRS keeps them for configure-time checks.
set(BPG_DNNL_INCLUDE_DIRS "")
set(BPG_DNNL_COMPILE_OPTIONS "")
if(BPG_WITH_DNNL)
  get_target_property(BPG_DNNL_INCLUDE_DIRS DNNL::dnnl INTERFACE_INCLUDE_DIRECTORIES)
  foreach(_dir ${BPG_DNNL_INCLUDE_DIRS})
    if(NOT _dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
      list(APPEND BPG_DNNL_COMPILE_OPTIONS "-isystem${_dir}") # joined: no SHELL: on sources
    endif()
  endforeach()
  set_property(TARGET DNNL::dnnl PROPERTY INTERFACE_INCLUDE_DIRECTORIES "")
endif()

# bpg_sources_see_onednn(DEFINITION source...): gives these sources of the calling directory
# oneDNN's headers, and DEFINITION (=1) unless it is "-".
function(bpg_sources_see_onednn definition)
  set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS ${BPG_DNNL_COMPILE_OPTIONS})
  if(NOT definition STREQUAL "-")
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS ${definition}=1)
  endif()
endfunction()
