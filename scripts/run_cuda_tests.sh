#!/usr/bin/env bash
# The CUDA kernels' tests without a GPU: builds with HULK_CUDA=SIMT (every cuda/*.cu compiled as
# C++ and run on the CPU simulator) and runs the tests labelled `cuda`.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/cpp-simt -G Ninja -DHULK_CUDA=SIMT -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/cpp-simt -j "$(nproc)"
ctest --test-dir build/cpp-simt -L cuda --output-on-failure -j "$(nproc)"
