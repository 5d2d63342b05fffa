#!/usr/bin/env bash
# The whole test suite: set up, build and run the C++ tests (GoogleTest through ctest),
# then the Python tests (pytest) against the installed package.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh

echo "== C++ tests (GoogleTest via ctest) =="
cmake -S . -B build/cpp-tests -G Ninja -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/cpp-tests -j "$(nproc)"
ctest --test-dir build/cpp-tests --output-on-failure -j "$(nproc)"

echo "== Python tests (pytest) =="
# From the checkout root: the editable install built the extension into hulk/ here.
python3 -m pytest tests/python -q -p no:cacheprovider
