#!/usr/bin/env bash
# Builds the C++ tests with AddressSanitizer + UndefinedBehaviorSanitizer and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/cpp-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHULK_SANITIZE=ON -DHULK_CUDA=OFF \
  -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/cpp-asan -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/cpp-asan --output-on-failure -j "$(nproc)"
