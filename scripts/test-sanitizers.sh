#!/usr/bin/env bash
# Builds the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer
# in build-asan/ and runs it with ctest. Any ASan report or undefined behaviour
# (-fno-sanitize-recover) fails the test that hit it.
#   bash scripts/test-sanitizers.sh [extra cmake args]
# Not run here: the tests labelled huge (tensors of more than 2^31 elements, ~13 GiB
# resident: ASan's shadow memory would need up to as much again, beyond this
# machine's 24 GiB, and they would take minutes under it), and those labelled mpi
# (LeakSanitizer takes Open MPI's own lasting allocations for leaks).
# oneDNN, oneTBB and OpenMP are uninstrumented system libraries; ASan checks
# our accesses to the buffers we pass them, not their internals.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
jobs="${BPG_JOBS:-$(nproc)}"
bash scripts/install-deps.sh
start=$(date +%s)
# -O1, as the sanitizers' own documentation advises: the build takes half the
# time of -O3 (the suite's shapes are small), and reports stay precise.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DBPG_SANITIZE=address,undefined -DBPG_TORCH=OFF "$@" >/dev/null
cmake --build build-asan -j"$jobs"
build-asan/bin/bpg-tests-bad_inputs --gtest_filter='BadInputCatalogue.*' | grep 'bad-input catalogue'
ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 900 -LE 'huge|mpi|large'
echo "test-sanitizers: ASan+UBSan build and suite in $(( $(date +%s) - start )) s"
