#!/usr/bin/env bash
# Everything a lent GPU machine should check, in one command (one device call):
#   1. build for sm_90 (H100/H200) with nvcc: the C++ core, the CUDA backend, the C++ tests;
#   2. the CUDA tests on the device (ctest -L cuda: kernel parity with the CPU, the model);
#   3. compute-sanitizer memcheck, racecheck and synccheck over the kernel parity tests;
#   4. the Python tests marked `cuda`, on the extension built in step 1;
#   5. benchmarks/bench_gpu.py, which writes its section of benchmarks/RESULTS.md, and the learned
#      planner's inference on 100,000 machines (bench_learned.py --inference-only), CPU and GPU;
# then a summary table, last, so the device tool's output tail shows it. Logs and RESULTS.md go
# to $OUT (the device tool brings them back) or build/gpu-check. Copy the bench_gpu section of
# the returned RESULTS.md into the repository's.
#
# The device image has nvcc, cmake, ninja, pybind11, scikit-build-core, numpy, networkx,
# pytest, torch and torch_geometric, and no internet. If it lacks OpenBLAS or GoogleTest,
# carry them: run `benchmarks/fetch_gpu_deps.sh` here first (it fills .gpu-deps/, ignored by
# git) and name `.gpu-deps` in the call's carry list.
#
# Options (environment): BENCH_ARGS (passed to bench_gpu.py, e.g. "--sizes 1e4,1e5,1e6"),
# SANITIZE_FILTER (gtest filter for the sanitizer runs), JOBS (build parallelism).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-$root/build/gpu-check}"
mkdir -p "$out"
jobs="${JOBS:-$(nproc)}"
declare -a names=() results=()
step() {  # step NAME COMMAND...: runs it, logs to $out/NAME.log, records PASS/FAIL
  local name="$1"
  shift
  echo "== $name =="
  local t0=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then results+=("PASS ($((SECONDS - t0)) s)"); else results+=("FAIL ($((SECONDS - t0)) s, see $name.log)"); tail -n 30 "$out/$name.log"; fi
  names+=("$name")
}

if [ -d .gpu-deps/root ]; then
  export CMAKE_PREFIX_PATH="$root/.gpu-deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  for d in "$root"/.gpu-deps/root/usr/lib/x86_64-linux-gnu "$root"/.gpu-deps/root/usr/lib/x86_64-linux-gnu/openblas-pthread; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && export LIBRARY_PATH="$d${LIBRARY_PATH:+:$LIBRARY_PATH}"
  done
  export CPATH="$root/.gpu-deps/root/usr/include${CPATH:+:$CPATH}"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
echo "GPU: $(cat "$out/gpu.txt")"

build() {  # the C++ tests and the Python extension, one CMake build
  cmake -S . -B build/gpu -G Ninja -DHULK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DHULK_BUILD_TESTS=ON \
    -DHULK_BUILD_PYTHON=ON -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" \
    -DPython_EXECUTABLE="$(command -v python3)" && cmake --build build/gpu -j "$jobs" &&
    bash scripts/assemble_package.sh build/gpu build/gpu-py
}
step build build
step cuda_tests ctest --test-dir build/gpu -L cuda --output-on-failure -j 1

filter="${SANITIZE_FILTER:-CudaOps.*:CudaModel.MovesBetweenDevicesAndSavesAcrossThem:Simt*}"
for tool in memcheck racecheck synccheck; do
  step "sanitizer_$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 \
    build/gpu/tests/cpp/hulk_cuda_tests --gtest_filter="$filter"
done

step python_tests env PYTHONPATH="$root/build/gpu-py" bash -c "cd /tmp && python3 -m pytest '$root/tests/python' -q -p no:cacheprovider -m cuda"
cp benchmarks/RESULTS.md "$out/RESULTS.md"
# shellcheck disable=SC2086
step bench env PYTHONPATH="$root/build/gpu-py" PYTHONUNBUFFERED=1 bash -c \
  "cd /tmp && python3 '$root/benchmarks/bench_gpu.py' --out '$out/RESULTS.md' ${BENCH_ARGS:-}"

step learned_inference env PYTHONPATH="$root/build/gpu-py" bash -c \
  "cd /tmp && python3 '$root/benchmarks/bench_learned.py' --inference-only"

echo
echo "== learned planner inference ==" && tail -n 1 "$out/learned_inference.log"
echo
echo "== bench_gpu summary =="
sed -n '/<!-- bench_gpu:begin -->/,/<!-- bench_gpu:end -->/p' "$out/RESULTS.md" | grep '^|' || echo "(no benchmark table)"
echo
echo "== gpu_check summary ($(cat "$out/gpu.txt")) =="
status=0
for i in "${!names[@]}"; do
  printf '%-20s %s\n' "${names[$i]}" "${results[$i]}"
  [[ "${results[$i]}" == PASS* ]] || status=1
done
exit $status
