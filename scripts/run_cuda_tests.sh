#!/usr/bin/env bash
# The CUDA backend's tests without a GPU. Builds with HULK_CUDA=SIMT (every cuda/*.cu compiled as
# C++ and run on the CPU simulator) and runs
#   - the C++ tests labelled `cuda` (GoogleTest: kernel parity with the CPU, the simulator itself),
#   - the Python tests marked `cuda` (device="cuda" end to end) against a SIMT build of the
#     extension installed into build/py-simt (the normal install is left as it is).
# On a GPU machine benchmarks/gpu_check.sh runs the same tests on the device instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

echo "== CUDA kernels on the SIMT simulator (ctest -L cuda) =="
cmake -S . -B build/cpp-simt -G Ninja -DHULK_CUDA=SIMT -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/cpp-simt -j "$(nproc)"
ctest --test-dir build/cpp-simt -L cuda --output-on-failure -j "$(nproc)"

echo "== device='cuda' from Python on the SIMT simulator (pytest -m cuda) =="
HULK_CUDA=SIMT python3 -m pip install -q --no-deps --upgrade --target build/py-simt \
  -C build-dir=build/py-simt-build .
cd /tmp && PYTHONPATH="$root/build/py-simt" python3 -m pytest "$root/tests/python" -q -p no:cacheprovider -m cuda
