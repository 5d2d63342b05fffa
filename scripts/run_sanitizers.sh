#!/usr/bin/env bash
# Builds the C++ tests with AddressSanitizer + UndefinedBehaviorSanitizer and runs them. The build
# is the SIMT one (HULK_CUDA=SIMT): the CUDA kernels run on the CPU simulator, where device memory
# is host memory, so ASan also checks every kernel's memory accesses (what compute-sanitizer's
# memcheck does on a GPU). The long model-training parity test is left to the plain SIMT run
# (scripts/run_cuda_tests.sh): at -O0 with ASan it takes minutes, and CudaOps covers its kernels.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/cpp-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHULK_SANITIZE=ON -DHULK_CUDA=SIMT \
  -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/cpp-asan -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/cpp-asan --output-on-failure -j "$(nproc)" -E 'CudaModel.TrainingLossCurve'
