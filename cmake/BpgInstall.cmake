# `cmake --install` puts the headers, the library, the tools and a config
# package under the prefix, so that another project can
#   find_package(bpg CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE bpg::bpg)
# tests/package builds such a project against an install tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BPG_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bpg)

install(TARGETS bpg EXPORT bpgTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/bpg ${PROJECT_BINARY_DIR}/include/bpg
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
if(BPG_BUILD_TOOLS)
  install(TARGETS bpg-run bpg-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT bpgTargets NAMESPACE bpg:: DESTINATION ${BPG_CONFIG_DIR})
# A static libbpg carries its private link dependencies (oneTBB, oneDNN,
# OpenMP) into the consumer's link, so the config must find them
# (BPG_CONFIG_DEPENDENCIES, from cmake/BpgPackage.cmake); a shared one needs
# only Threads.
get_target_property(BPG_LIBRARY_TYPE bpg TYPE)
set(BPG_CONFIG_FIND_DEPENDENCIES "")
set(BPG_PC_REQUIRES_PRIVATE_TEXT "")
set(BPG_PC_LIBS_PRIVATE_TEXT "")
if(BPG_LIBRARY_TYPE STREQUAL "STATIC_LIBRARY")
  set(BPG_CONFIG_STATIC ON)
  foreach(_dependency ${BPG_CONFIG_DEPENDENCIES})
    # oneDNN: the major version bpg was built against, where it was found
    # first (a 3.x build beside Debian's 2.6 must not link 2.6).
    if(_dependency MATCHES "^dnnl" AND dnnl_VERSION)
      string(REGEX REPLACE "^dnnl" "dnnl ${dnnl_VERSION_MAJOR}.${dnnl_VERSION_MINOR}" _dependency "${_dependency}")
      string(APPEND _dependency " HINTS \"${dnnl_DIR}\"")
    endif()
    string(APPEND BPG_CONFIG_FIND_DEPENDENCIES "find_dependency(${_dependency})\n")
  endforeach()
  list(JOIN BPG_PC_REQUIRES_PRIVATE ", " BPG_PC_REQUIRES_PRIVATE_TEXT)
  list(JOIN BPG_PC_LIBS_PRIVATE " " BPG_PC_LIBS_PRIVATE_TEXT)
else()
  set(BPG_CONFIG_STATIC OFF)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/bpgConfig.cmake.in
  ${PROJECT_BINARY_DIR}/bpgConfig.cmake INSTALL_DESTINATION ${BPG_CONFIG_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/bpgConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/bpgConfig.cmake ${PROJECT_BINARY_DIR}/bpgConfigVersion.cmake
  DESTINATION ${BPG_CONFIG_DIR})

# bpg.pc for `pkg-config --cflags --libs bpg`; --static adds what libbpg.a
# needs. The prefix is found from the file's own place, so that an install
# with `cmake --install --prefix` elsewhere still works.
set(BPG_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH BPG_PC_PREFIX_FROM_PCDIR /prefix/${BPG_PC_DIR} /prefix)
string(REGEX REPLACE "/$" "" BPG_PC_PREFIX_FROM_PCDIR ${BPG_PC_PREFIX_FROM_PCDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/bpg.pc.in ${PROJECT_BINARY_DIR}/bpg.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/bpg.pc DESTINATION ${BPG_PC_DIR})

# The python package bpg_torch (BPG_TORCH): its .py files and the op library,
# where the system python3 imports it from under the prefix
# (BPG_PYTHON_INSTALL_DIR, from sysconfig at configure time).
if(BPG_TORCH)
  install(DIRECTORY ${BPG_TORCH_PACKAGE_DIR} DESTINATION ${BPG_PYTHON_INSTALL_DIR}
    FILES_MATCHING PATTERN "*.py")
  install(TARGETS bpg_torch LIBRARY DESTINATION ${BPG_PYTHON_INSTALL_DIR}/bpg_torch)
endif()
