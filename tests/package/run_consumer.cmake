# cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -P run_consumer.cmake
# Installs the build into WORK_DIR/prefix, then configures, builds and runs
# the consumer project against that prefix alone (CMAKE_PREFIX_PATH).
foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(f include/bpg/bpg.hpp include/bpg/version.hpp include/bpg/dml.hpp bin/bpg-run
    lib/cmake/bpg/bpgConfig.cmake lib/cmake/bpg/bpgConfigVersion.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "the install tree has no ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
file(REMOVE_RECURSE ${WORK_DIR})
