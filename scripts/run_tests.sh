#!/usr/bin/env bash
# The whole test suite: set up, build and run the C++ tests (GoogleTest through ctest),
# the Python tests (pytest) against the installed package, then the CUDA tests on the SIMT
# simulator (scripts/run_cuda_tests.sh). Without a GPU the device-only tests skip, saying why.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh

echo "== C++ tests (GoogleTest via ctest) =="
cmake -S . -B build/cpp-tests -G Ninja -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/cpp-tests -j "$(nproc)"
ctest --test-dir build/cpp-tests --output-on-failure -j "$(nproc)"

echo "== Python tests (pytest) =="
# From the checkout root: the editable install built the extension into hulk/ here. -rs lists
# each skip with its reason (no GPU; no PyTorch: the launch tests of hulk.launch need hulk[torch]).
python3 -m pytest tests/python -q -p no:cacheprovider -rs

# The CUDA kernels and device="cuda" on the CPU simulator (HULK_CUDA=SIMT): no GPU needed.
bash scripts/run_cuda_tests.sh
