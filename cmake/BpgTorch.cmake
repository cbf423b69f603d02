# The PyTorch extension bpg_torch (included when BPG_TORCH is ON).
#
# torch 1.13 compiles extensions as C++14 with its own libstdc++ ABI flag,
# while bpg's public headers need C++17. The two meet at a C ABI
# (bindings/torch/bpg_capi.h): bpg_capi, C++17, uses bpg's graph API; the op
# library libbpg_torch.so is compiled with torch's standard and flags and
# includes only bpg_capi.h of bpg. Nothing of either standard library crosses.
find_package(Torch CONFIG REQUIRED)

# The interpreter the package is staged, tested and installed for: the
# system python3, where Debian's python3-torch lives.
find_program(BPG_PYTHON_EXECUTABLE NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT BPG_PYTHON_EXECUTABLE)
  find_program(BPG_PYTHON_EXECUTABLE NAMES python3 REQUIRED)
endif()

# Where `import bpg_torch` finds the package under the install prefix: the
# interpreter's purelib, relative to the prefix it belongs to (Debian:
# lib/python3.X/dist-packages under /usr/local). Absolute values are kept.
if(NOT DEFINED BPG_PYTHON_INSTALL_DIR)
  execute_process(
    COMMAND ${BPG_PYTHON_EXECUTABLE} -c
      "import os, sys, sysconfig\np = sysconfig.get_path('purelib')\nfor base in ('/usr/local', sys.prefix):\n    if p.startswith(base + os.sep):\n        print(os.path.relpath(p, base)); break\nelse:\n    print(p)"
    OUTPUT_VARIABLE _bpg_python_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _bpg_python_rc)
  if(NOT _bpg_python_rc EQUAL 0 OR _bpg_python_dir STREQUAL "")
    message(FATAL_ERROR "BPG_TORCH: could not ask ${BPG_PYTHON_EXECUTABLE} for its package directory")
  endif()
  set(BPG_PYTHON_INSTALL_DIR ${_bpg_python_dir} CACHE STRING
    "Install directory of the bpg_torch package (relative: under CMAKE_INSTALL_PREFIX)")
endif()

set(BPG_TORCH_PACKAGE_DIR ${PROJECT_BINARY_DIR}/python/bpg_torch)
add_subdirectory(${PROJECT_SOURCE_DIR}/bindings/torch ${PROJECT_BINARY_DIR}/bindings/torch)

# The package's python files, copied so that the build tree holds an
# importable package (PYTHONPATH=<build>/python); an edit re-runs the copy.
file(GLOB BPG_TORCH_PY_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/bpg_torch/*.py)
foreach(_py ${BPG_TORCH_PY_FILES})
  get_filename_component(_name ${_py} NAME)
  configure_file(${_py} ${BPG_TORCH_PACKAGE_DIR}/${_name} COPYONLY)
endforeach()

# Each tests/python/test_*.py is one ctest test (label "python").
if(BPG_BUILD_TESTS)
  file(GLOB BPG_TORCH_PY_TESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/python/test_*.py)
  foreach(_test ${BPG_TORCH_PY_TESTS})
    get_filename_component(_name ${_test} NAME_WE)
    add_test(NAME python.${_name}
      COMMAND ${BPG_PYTHON_EXECUTABLE} -m pytest -q -x ${_test}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/tests/python)
    set_tests_properties(python.${_name} PROPERTIES
      LABELS python TIMEOUT 600
      ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python")
  endforeach()
endif()
