#!/usr/bin/env bash
# Builds the library and the concurrency and threading tests with
# ThreadSanitizer in build-tsan/ and runs them; any data race report fails.
# The oneTBB kernels of src/backends/tbb are instrumented too (without their
# target_clones, see kernel_attributes.hpp), their parallel loops annotated
# with the ordering oneTBB's scheduler gives (parallel.hpp); oneTBB, oneDNN
# and OpenMP are uninstrumented system libraries. The concurrency tests lower
# the kernels' size thresholds, so every kernel path runs here.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
# ignore_noninstrumented_modules: oneTBB, oneDNN and the OpenMP runtime are
# uninstrumented system libraries whose own synchronisation TSan cannot see;
# without it, oneTBB's memset of a recycled task block is reported as a race
# with the thread that last used that memory.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1}"
jobs="${BPG_JOBS:-$(nproc)}"
# TSan needs its fixed memory layout: with large mmap randomisation (newer
# kernels) binaries abort at start unless ASLR is off for them.
no_aslr=(setarch "$(uname -m)" -R)
bash scripts/install-deps.sh
start=$(date +%s)
# -O1 (as for ASan): TSan's documentation asks for -O1 or more, and a kernel
# file builds in 70% of -O3's time.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DBPG_SANITIZE=thread \
  -DBPG_TEST_GLOB='concurrency/test_*.cpp;threading/test_*.cpp' -DBPG_BUILD_TOOLS=OFF -DBPG_BUILD_EXAMPLES=OFF -DBPG_FUZZ_REPLAY=OFF -DBPG_TORCH=OFF >/dev/null
"${no_aslr[@]}" cmake --build build-tsan -j"$jobs" # runs each bpg-tests-<folder> to list its tests
"${no_aslr[@]}" ctest --test-dir build-tsan --output-on-failure -j1 --timeout 900 -L concurrency
echo "test-tsan: TSan build and concurrency tests in $(( $(date +%s) - start )) s"
