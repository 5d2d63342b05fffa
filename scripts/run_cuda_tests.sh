#!/usr/bin/env bash
# The CUDA backend's tests without a GPU. One SIMT build (HULK_CUDA=SIMT: every cuda/**/*.cu compiled
# as C++ and run on the CPU simulator) of the C++ tests and of the Python extension, then
#   - the C++ tests labelled `cuda` (GoogleTest: kernel parity with the CPU, the model, the
#     simulator itself),
#   - the Python tests marked `cuda` (device="cuda" end to end), with the package assembled in
#     build/py-simt from the sources and the SIMT extension (the normal install is left alone).
# On a GPU machine benchmarks/gpu_check.sh runs the same tests on the device instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

python3 -m pip install -q --upgrade --target build/py-simt-deps "pybind11>=2.12" >/dev/null
pybind11_dir="$(PYTHONPATH="$root/build/py-simt-deps" python3 -m pybind11 --cmakedir)"
cmake -S . -B build/cpp-simt -G Ninja -DHULK_CUDA=SIMT -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=ON \
  -Dpybind11_DIR="$pybind11_dir" -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build/cpp-simt -j "$(nproc)"

echo "== CUDA kernels on the SIMT simulator (ctest -L cuda) =="
ctest --test-dir build/cpp-simt -L cuda --output-on-failure -j "$(nproc)"

echo "== device='cuda' from Python on the SIMT simulator (pytest -m cuda) =="
bash scripts/assemble_package.sh build/cpp-simt build/py-simt
cd /tmp && PYTHONPATH="$root/build/py-simt" python3 -m pytest "$root/tests/python" -q -p no:cacheprovider -m cuda
