# What the library shows its consumers (included at the end of
# src/CMakeLists.txt, once the target bpg is complete). docs/packaging.md.
#
# - Symbols: everything hidden but the public API, which include/bpg/*.hpp
#   marks visible (#pragma GCC visibility push(default)).
# - Shared library: versioned SONAME from project(VERSION), libbpg.so.0.
# - Link interface: only what a consumer's link needs. nlohmann_json is
#   header-only and used by src/ alone, so it leaves the exported interface.
# - BUILD_SHARED_LIBS=ON: in-tree code that uses internal headers (tests,
#   tools, fuzzers, bindings: target bpg_internal) cannot link hidden symbols
#   from libbpg.so, so it links bpg_static, an archive of the same objects.
set_target_properties(bpg PROPERTIES
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR})

# Header-only dependencies: needed to compile bpg, never to link against it.
set(BPG_HEADER_ONLY_DEPENDENCIES nlohmann_json::nlohmann_json)

# The targets bpg links privately, as the exported interface of a static
# libbpg.a lists them ($<LINK_ONLY:...>): dropped there for header-only ones.
get_target_property(_bpg_interface bpg INTERFACE_LINK_LIBRARIES)
if(_bpg_interface)
  foreach(_dep ${BPG_HEADER_ONLY_DEPENDENCIES})
    list(REMOVE_ITEM _bpg_interface "$<LINK_ONLY:${_dep}>")
  endforeach()
  set_property(TARGET bpg PROPERTY INTERFACE_LINK_LIBRARIES "${_bpg_interface}")
endif()

# The packages a consumer of the static archive must find (bpgConfig.cmake)
# and link (bpg.pc), derived from what bpg links, so that an optional
# dependency (oneDNN) is listed exactly when this build uses it.
get_target_property(_bpg_links bpg LINK_LIBRARIES)
set(BPG_CONFIG_DEPENDENCIES "")
set(BPG_PC_REQUIRES_PRIVATE "")
set(BPG_PC_LIBS_PRIVATE "")
foreach(_lib ${_bpg_links})
  if(_lib MATCHES "^TBB::")
    list(APPEND BPG_CONFIG_DEPENDENCIES "TBB CONFIG")
    list(APPEND BPG_PC_REQUIRES_PRIVATE tbb)
  elseif(_lib MATCHES "^DNNL::")
    list(APPEND BPG_CONFIG_DEPENDENCIES "dnnl CONFIG")
    # The oneDNN bpg was built against, also when it is not the system's.
    get_filename_component(_dnnl_lib_dir "${dnnl_DIR}/../.." ABSOLUTE)
    if(NOT _dnnl_lib_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
      list(APPEND BPG_PC_LIBS_PRIVATE "-L${_dnnl_lib_dir}")
    endif()
    list(APPEND BPG_PC_LIBS_PRIVATE -ldnnl)
  elseif(_lib MATCHES "^OpenMP::")
    list(APPEND BPG_CONFIG_DEPENDENCIES "OpenMP")
    list(APPEND BPG_PC_LIBS_PRIVATE ${OpenMP_CXX_FLAGS})
  elseif(_lib MATCHES "^Threads::")
    list(APPEND BPG_PC_LIBS_PRIVATE ${CMAKE_THREAD_LIBS_INIT})
  endif()
endforeach()
# An instrumented static library needs the sanitizer runtime at the consumer's
# link, as the exported target says in src/CMakeLists.txt.
if(BPG_SANITIZE)
  list(APPEND BPG_PC_LIBS_PRIVATE -fsanitize=${BPG_SANITIZE})
endif()
list(REMOVE_DUPLICATES BPG_CONFIG_DEPENDENCIES)
list(REMOVE_DUPLICATES BPG_PC_REQUIRES_PRIVATE)
list(REMOVE_DUPLICATES BPG_PC_LIBS_PRIVATE)
# For cmake/BpgInstall.cmake, included by the top-level CMakeLists.txt.
set(BPG_CONFIG_DEPENDENCIES "${BPG_CONFIG_DEPENDENCIES}" PARENT_SCOPE)
set(BPG_PC_REQUIRES_PRIVATE "${BPG_PC_REQUIRES_PRIVATE}" PARENT_SCOPE)
set(BPG_PC_LIBS_PRIVATE "${BPG_PC_LIBS_PRIVATE}" PARENT_SCOPE)

get_target_property(_bpg_type bpg TYPE)
if(_bpg_type STREQUAL "SHARED_LIBRARY")
  # Compile the sources once, as bpg would, and make both libraries of them.
  get_target_property(_bpg_sources bpg SOURCES)
  add_library(bpg_objects OBJECT ${_bpg_sources})
  foreach(_prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES
      CXX_VISIBILITY_PRESET VISIBILITY_INLINES_HIDDEN)
    get_target_property(_value bpg ${_prop})
    if(_value)
      set_property(TARGET bpg_objects PROPERTY ${_prop} "${_value}")
    endif()
  endforeach()
  set_property(TARGET bpg_objects PROPERTY POSITION_INDEPENDENT_CODE ON)
  # bpg's dependencies bring their include directories and flags (-fopenmp).
  target_link_libraries(bpg_objects PRIVATE ${_bpg_links})
  set_property(TARGET bpg PROPERTY SOURCES $<TARGET_OBJECTS:bpg_objects>)

  add_library(bpg_static STATIC $<TARGET_OBJECTS:bpg_objects>)
  # Link-only, as a static bpg lists its dependencies: its users compile as they would with
  # that (-fopenmp stays bpg's own), so the two builds share a compiler cache (.ci/run).
  set(_bpg_link_only ${_bpg_links})
  list(TRANSFORM _bpg_link_only REPLACE "^(.+)$" "$<LINK_ONLY:\\1>")
  target_link_libraries(bpg_static INTERFACE ${_bpg_link_only})
  foreach(_prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_LINK_OPTIONS)
    get_target_property(_value bpg ${_prop})
    if(_value)
      set_property(TARGET bpg_static PROPERTY ${_prop} "${_value}")
    endif()
  endforeach()
  get_target_property(_internal_links bpg_internal INTERFACE_LINK_LIBRARIES)
  list(TRANSFORM _internal_links REPLACE "^bpg$" bpg_static)
  set_property(TARGET bpg_internal PROPERTY INTERFACE_LINK_LIBRARIES "${_internal_links}")
endif()

# libbpg.so exports the public API and nothing else: the compiler's
# visibility leaves out the internals but not the standard library's
# templates instantiated on bpg types, OpenMP's named critical sections or
# the ifunc symbols of target_clones; the version script lists the public
# names (read from the headers) and makes every other symbol local.
if(_bpg_type STREQUAL "SHARED_LIBRARY")
  include(${CMAKE_CURRENT_LIST_DIR}/BpgPublicNames.cmake)
  file(GLOB _bpg_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/bpg/*.hpp)
  bpg_public_names(_types _functions _opaque ${_bpg_headers} ${PROJECT_BINARY_DIR}/include/bpg/version.hpp)
  # Mangled patterns: the length before each name keeps bpg::op from
  # matching bpg::op_kind_names. A type: its members (const ones: NK), its
  # typeinfo, typeinfo name and vtable. A function: any overload (E), or
  # one with an ABI tag (B, as in name[abi:cxx11]).
  set(_script "# Generated by cmake/BpgPackage.cmake from include/bpg/*.hpp.\n{\n  global:\n")
  foreach(_type ${_types})
    bpg_mangled_name(_m ${_type})
    string(APPEND _script "    _ZN${_m}*; _ZNK${_m}*; _ZT[ISV]N${_m}E;\n")
  endforeach()
  foreach(_function ${_functions})
    bpg_mangled_name(_m ${_function})
    string(APPEND _script "    _ZN${_m}E*; _ZN${_m}B*;\n")
  endforeach()
  string(APPEND _script "  local: *;\n};\n")
  set(BPG_VERSION_SCRIPT ${PROJECT_BINARY_DIR}/bpg.map)
  # Rewritten only when it changes (configure_file), so that a reconfigure
  # does not relink libbpg.so. file(CONFIGURE) would need CMake 3.18.
  file(WRITE ${BPG_VERSION_SCRIPT}.in "${_script}")
  configure_file(${BPG_VERSION_SCRIPT}.in ${BPG_VERSION_SCRIPT} COPYONLY)
  target_link_options(bpg PRIVATE -Wl,--version-script=${BPG_VERSION_SCRIPT})
  set_property(TARGET bpg APPEND PROPERTY LINK_DEPENDS ${BPG_VERSION_SCRIPT})
endif()
