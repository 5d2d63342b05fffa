#!/usr/bin/env bash
# The GPU check, in stages, run one by one or all in one device command (a lent machine runs one
# command for at most 600 s; 15 minutes of device time in all per session, its starts included). Each stage builds what it needs (a
# lent machine starts bare), runs its steps under a deadline well inside 600 s, and writes to $OUT
# as it goes: summary.txt gets a line when each step starts and when it ends, logs are streamed,
# benchmark rows are appended one by one. A stage that is killed keeps what it measured.
#
#   bash benchmarks/gpu_check.sh list             the stages, their expected times on a lent GPU, what they write
#   bash benchmarks/gpu_check.sh deps             HERE, once before the device calls: fills .gpu-deps/
#                                                 (GoogleTest's source) and counts the bytes that travel
#   bash benchmarks/gpu_check.sh STAGE            on the GPU machine (the `run` tool's command)
#   bash benchmarks/gpu_check.sh all              every stage in one device command, under one budget
#                                                 (STAGE_BUDGET_ALL, default 560 s); everything it writes
#                                                 comes back packed in $OUT/gpu_check.tgz (the tool returns
#                                                 at most 8 files), with $OUT/summary.txt beside it
#   bash benchmarks/gpu_check.sh STAGE --dry-run  here, without a GPU: the stage's logic on the SIMT
#                                                 simulator with tiny sizes (also HULK_GPU_CHECK_DRY=1)
#   bash benchmarks/gpu_check.sh report DIR...    here: RESULTS.md's bench_gpu section from the rows
#                                                 files the bench stages brought back
#
# What the device image lacks, and how the stages get it (no registry there):
#   - GoogleTest: built from the source in .gpu-deps/googletest (about 1 MB, carried) unless the
#     image has it;
#   - a CPU BLAS with cblas.h (the core's CPU GEMM): unless the image has one, benchmarks/gpu_blas/
#     (a cblas.h and a small libopenblas.so built there) forwards cblas_sgemm to the OpenBLAS that
#     the image's scipy or numpy wheel bundles (libscipy_openblas*.so, with its libgfortran).
# Options (environment): JOBS (build parallelism, default nproc), STAGE_BUDGET (seconds a stage
# may run before it stops its last step, default 540), STAGE_BUDGET_ALL (the same for `all`, default
# 560), BENCH_ARGS (added to bench_gpu.py).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1

# name|expected seconds on a lent H100/H200 from a bare machine, the build included (H200, 2026-11-26:
# build 58 s measured so; sanitize 28, bench1 109 and bench2 50 s measured after it, plus about 25 s
# for their own build; bench3 had time for its first row only; 2026-11-28 in `all`: build 62,
# sanitize 26, cpp 6, bench1 82, bench2 53, bench3 202 s)|what it runs|what it writes
STAGES=(
  "build|60|configure + build for sm_90 (C++ core, CUDA backend, C++ tests, extension); ctest -L cuda; pytest -m cuda|summary.txt deps.log build.log ctest.log pytest.log"
  "sanitize|60|build the CUDA tests; compute-sanitizer memcheck, racecheck, synccheck over the kernel parity tests|summary.txt deps.log build.log memcheck.log racecheck.log synccheck.log"
  "cpp|60|the whole C++ suite but the cuda label (stage build runs that): one OpenMP thread per test, a test per core|summary.txt deps.log build.log ctest.log"
  "bench1|140|build the extension; bench_gpu.py uniform graphs 1e4, 1e5, 1e6 (F 64, 256, with epochs); learned-planner inference on 100,000 machines|summary.txt deps.log build.log bench.log bench_rows.jsonl RESULTS.md learned.log"
  "bench2|80|build the extension; bench_gpu.py power-law graphs 1e4, 1e5, 1e6 (F 64, 256)|summary.txt deps.log build.log bench.log bench_rows.jsonl RESULTS.md"
  "bench3|300|build the extension; bench_gpu.py 4e6 nodes, uniform and power-law (F 64, 256; baselines that would not fit are skipped)|summary.txt deps.log build.log bench.log bench_rows.jsonl RESULTS.md"
)

stage_field() {  # stage_field NAME INDEX
  local s
  for s in "${STAGES[@]}"; do
    IFS='|' read -r -a f <<<"$s"
    [ "${f[0]}" = "$1" ] && { echo "${f[$2]}"; return 0; }
  done
  return 1
}

list_stages() {
  local s total=0
  printf '%-9s %-9s %s\n' stage "GPU (s)" "what it runs -> what it writes to \$OUT"
  for s in "${STAGES[@]}"; do
    IFS='|' read -r -a f <<<"$s"
    printf '%-9s %-9s %s -> %s\n' "${f[0]}" "~${f[1]}" "${f[2]}" "${f[3]}"
    total=$((total + f[1]))
  done
  echo "total ~${total} s of commands in ${#STAGES[@]} calls (plus about a minute per machine start)"
}

carried_bytes() {  # what a device call sends: tracked and untracked-not-ignored files, plus .gpu-deps
  local tree deps
  tree=$(git ls-files -z -c -o --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s+=$1} END {print s+0}')
  deps=$( [ -d .gpu-deps ] && du -sb .gpu-deps | cut -f1 || echo 0)
  echo "working tree $tree bytes + carried .gpu-deps $deps bytes = $((tree + deps)) bytes ($(( (tree + deps) / 1024 )) KiB) of the 64 MiB limit"
  [ $((tree + deps)) -lt $((48 * 1024 * 1024)) ] || { echo "over 48 MiB: too close to the limit" >&2; return 1; }
}

fetch_deps() {  # here: GoogleTest's source into .gpu-deps/googletest (googletest only, no gmock)
  rm -rf .gpu-deps && mkdir -p .gpu-deps
  local src=/usr/src/googletest tmp=""
  if [ ! -f "$src/googletest/include/gtest/gtest.h" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download googletest >/dev/null && dpkg -x googletest_*.deb root) || {
      echo "no /usr/src/googletest and apt-get download googletest failed" >&2; return 1; }
    src="$tmp/root/usr/src/googletest"
  fi
  mkdir -p .gpu-deps/googletest/googletest
  cp "$src/CMakeLists.txt" .gpu-deps/googletest/
  cp -r "$src/googletest/CMakeLists.txt" "$src/googletest/cmake" "$src/googletest/include" "$src/googletest/src" \
    .gpu-deps/googletest/googletest/
  [ -n "$tmp" ] && rm -rf "$tmp"
  echo "GoogleTest $(sed -n 's/^set(GOOGLETEST_VERSION \(.*\))/\1/p' .gpu-deps/googletest/CMakeLists.txt) source in .gpu-deps/googletest"
  carried_bytes
}

case "${1:-}" in
  list) list_stages; exit 0 ;;
  deps) fetch_deps; exit $? ;;
  bytes) carried_bytes; exit $? ;;
  report)
    shift
    files=()
    for d in "$@"; do
      # every argument is a stage's folder: anything else (an option, a file) is refused, since
      # the section is always written into benchmarks/RESULTS.md
      [ -d "$d" ] || { echo "report takes the bench stages' folders; '$d' is not a folder" >&2; exit 2; }
      [ -f "$d/bench_rows.jsonl" ] && files+=("$d/bench_rows.jsonl")
    done
    [ ${#files[@]} -gt 0 ] || { echo "no bench_rows.jsonl under: $*" >&2; exit 1; }
    joined=$(IFS=,; echo "${files[*]}")
    exec python3 benchmarks/bench_gpu.py --from-rows "$joined" --out benchmarks/RESULTS.md ;;
  ""|-h|--help) sed -n '2,29p' "$0"; echo; list_stages; exit 0 ;;
  all)
    # Every stage, one after the other, in one device command: a machine start costs about a
    # minute and a session has 15 minutes of device time. Each stage gets the time left, at most
    # twice its expected time, so a slow stage cannot starve the ones after it.
    shift
    final="${OUT:-$root/build/gpu-check}"
    work=$(mktemp -d /tmp/gpu_check_all.XXXXXX)
    mkdir -p "$final"
    pack() { tar czf "$work.tgz" -C "$work" . 2>/dev/null && mv "$work.tgz" "$final/gpu_check.tgz"; }
    (while sleep 20; do pack; done) &
    packer=$!
    total="${STAGE_BUDGET_ALL:-560}"
    rc=0
    for s in "${STAGES[@]}"; do
      name="${s%%|*}"
      left=$((total - SECONDS))
      cap=$((2 * $(stage_field "$name" 1)))
      [ "$left" -gt "$cap" ] && left=$cap
      if [ "$left" -le 30 ]; then
        echo "stage $name: NOT RUN (the budget of all is spent)" | tee -a "$work/summary.txt"
        rc=1
        continue
      fi
      # (a dry run adds the stage's name to $OUT itself)
      stage_out="$work/$name"
      [ "${HULK_GPU_CHECK_DRY:-0}" = 1 ] || [ "${1:-}" = "--dry-run" ] && stage_out="$work"
      OUT="$stage_out" STAGE_BUDGET="$left" bash "$0" "$name" "$@" >"$work/$name.out" 2>&1 || rc=1
      sed -n '/: \(PASS\|FAIL\|NOT RUN\)/p' "$work/$name/summary.txt" |
        sed "s/^/$name: /" | tee -a "$work/summary.txt"
    done
    kill "$packer" 2>/dev/null
    wait "$packer" 2>/dev/null
    pack
    cp "$work/summary.txt" "$final/summary.txt"
    echo "all stages: $([ $rc -eq 0 ] && echo PASS || echo FAIL) in ${SECONDS} s; logs and rows in $final/gpu_check.tgz"
    exit $rc ;;
esac
stage="$1"
shift
stage_field "$stage" 0 >/dev/null || { echo "unknown stage '$stage'; the stages:" >&2; list_stages >&2; exit 2; }
dry="${HULK_GPU_CHECK_DRY:-0}"
[ "${1:-}" = "--dry-run" ] && dry=1

if [ "$dry" = 1 ]; then
  out="${OUT:-$root/build/gpu-check-dry}/$stage"
  build_dir=build/gpu-dry
  cuda_flags=(-DHULK_CUDA=SIMT)
  deps_root="$root/build/gpu-dry-deps"
else
  out="${OUT:-$root/build/gpu-check/$stage}"
  build_dir=build/gpu
  cuda_flags=(-DHULK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
  deps_root="$root/build/gpu-deps"
fi
mkdir -p "$out"
jobs="${JOBS:-$(nproc)}"
budget="${STAGE_BUDGET:-540}"
deadline=$((SECONDS + budget))
summary="$out/summary.txt"
status=0
{
  echo "stage $stage$([ "$dry" = 1 ] && echo ' (dry run: SIMT simulator, tiny sizes)') on $(hostname), $(date -u +%FT%TZ)"
  echo "expected on a lent H100/H200: ~$(stage_field "$stage" 1) s; budget ${budget} s"
  if [ "$dry" = 1 ]; then echo "device: none (SIMT)"; else
    echo "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"; fi
} >"$summary"
cat "$summary"

step() {  # step NAME LOG COMMAND...: runs it under the stage's deadline, output to $out/LOG (streamed)
  local name="$1" log="$2" left t0=$SECONDS rc
  shift 2
  left=$((deadline - SECONDS))
  if [ "$left" -le 5 ]; then
    echo "$name: NOT RUN (stage budget spent)" | tee -a "$summary"
    status=1
    return 1
  fi
  echo "$name: started ($((SECONDS)) s into the stage, ${left} s left)" >>"$summary"
  echo "== $name =="
  # a function of this script (build) runs in a child bash that has it exported
  if declare -F "$1" >/dev/null; then set -- bash -c '"$@"' "$1" "$@"; fi
  timeout --kill-after=10 "$left" "$@" >>"$out/$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "$name: PASS ($((SECONDS - t0)) s)" | tee -a "$summary"
  else
    [ $rc -eq 124 ] && why="stopped at the stage budget" || why="exit $rc"
    echo "$name: FAIL ($why, $((SECONDS - t0)) s, see $log)" | tee -a "$summary"
    tail -n 25 "$out/$log"
    status=1
  fi
  return $rc
}

deps() {  # GoogleTest and a CBLAS where the machine has none (the dry run always takes the carried routes)
  local prefix=()
  mkdir -p "$deps_root"
  if [ "$dry" != 1 ] && { [ -f /usr/include/gtest/gtest.h ] || ls /usr/lib/*/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1; }; then
    echo "GoogleTest: the system's"
  elif [ -f "$deps_root/gtest/include/gtest/gtest.h" ]; then
    echo "GoogleTest: built before, $deps_root/gtest"
  else
    [ -f .gpu-deps/googletest/CMakeLists.txt ] || { echo "GoogleTest missing: run 'bash benchmarks/gpu_check.sh deps' here and carry .gpu-deps"; return 1; }
    echo "GoogleTest: building the carried source"
    cmake -S .gpu-deps/googletest -B "$deps_root/gtest-build" -G Ninja -DBUILD_GMOCK=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$deps_root/gtest" -DCMAKE_POSITION_INDEPENDENT_CODE=ON >/dev/null &&
      cmake --build "$deps_root/gtest-build" -j "$jobs" >/dev/null && cmake --install "$deps_root/gtest-build" >/dev/null || return 1
  fi
  [ -d "$deps_root/gtest" ] && prefix+=("$deps_root/gtest")

  if [ "$dry" != 1 ] && [ -f /usr/include/cblas.h ] && grep -q 'libopenblas\|libblas\.so' <<<"$(ldconfig -p)"; then
    echo "CBLAS: the system's"
  else
    local so sym ilp=()
    so=$(python3 - <<'EOF'
import glob, importlib.util, os
for pkg in ("scipy", "numpy"):  # scipy's takes 32-bit integers, numpy's 64-bit ones
    spec = importlib.util.find_spec(pkg)
    if spec and spec.origin:
        libs = os.path.join(os.path.dirname(os.path.dirname(spec.origin)), pkg + ".libs")
        found = sorted(glob.glob(os.path.join(libs, "libscipy_openblas*.so")))
        if found:
            print(found[0])
            break
EOF
)
    [ -n "$so" ] || { echo "CBLAS: none on this machine and no scipy/numpy wheel with OpenBLAS"; return 1; }
    local syms
    syms=$(nm -D --defined-only "$so")  # (not piped into grep -q: pipefail would see nm's SIGPIPE)
    if grep -q ' scipy_cblas_sgemm$' <<<"$syms"; then sym=lp64
    elif grep -q ' scipy_cblas_sgemm64_$' <<<"$syms"; then sym=ilp64; ilp=(-DHULK_ILP64)
    else echo "CBLAS: $so has no scipy_cblas_sgemm"; return 1; fi
    echo "CBLAS: the wheel's OpenBLAS $so ($sym), through benchmarks/gpu_blas"
    mkdir -p "$deps_root/blas/lib"
    cc -O2 -shared -fPIC "${ilp[@]}" -Ibenchmarks/gpu_blas -o "$deps_root/blas/lib/libopenblas.so" \
      benchmarks/gpu_blas/shim.c "$so" -Wl,-rpath,"$(dirname "$so")" || return 1
    cc -O2 -Ibenchmarks/gpu_blas -o "$deps_root/blas/selftest" benchmarks/gpu_blas/selftest.c \
      -L"$deps_root/blas/lib" -lopenblas -lm -Wl,-rpath,"$deps_root/blas/lib" && "$deps_root/blas/selftest" || return 1
    prefix+=("$deps_root/blas")
    export CPATH="$root/benchmarks/gpu_blas${CPATH:+:$CPATH}"
    export LD_LIBRARY_PATH="$deps_root/blas/lib:$(dirname "$so")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  CMAKE_PREFIX_PATH="$(IFS=';'; echo "${prefix[*]:-}")"
  export CMAKE_PREFIX_PATH
}

build() {  # build TARGET...: configure once (tests and extension), then only the targets asked for
  local pybind11_dir
  # the image has pybind11; here the dry run may find it where scripts/run_cuda_tests.sh put it
  pybind11_dir=$(python3 -m pybind11 --cmakedir 2>/dev/null || PYTHONPATH="$root/build/py-simt-deps" python3 -m pybind11 --cmakedir) || return 1
  if [ ! -f "$build_dir/build.ninja" ]; then
    local cuda_flags
    read -r -a cuda_flags <<<"$HULK_GPU_CHECK_CUDA_FLAGS"
    cmake -S . -B "$build_dir" -G Ninja "${cuda_flags[@]}" -DHULK_BUILD_TESTS=ON -DHULK_BUILD_PYTHON=ON \
      -DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH" -Dpybind11_DIR="$pybind11_dir" \
      -DPython_EXECUTABLE="$(command -v python3)" || return 1
  fi
  cmake --build "$build_dir" -j "$jobs" ${1:+--target "$@"} || return 1
  if [ -z "${1:-}" ] || [[ " $* " == *" _core "* ]]; then
    bash scripts/assemble_package.sh "$build_dir" "$build_dir-py"
  fi
}

# deps sets CMAKE_PREFIX_PATH, CPATH and LD_LIBRARY_PATH for the later steps: not in a subshell.
echo "== deps ==" && echo "deps: started" >>"$summary"
if deps >"$out/deps.log" 2>&1; then echo "deps: PASS" | tee -a "$summary"; else
  echo "deps: FAIL (see deps.log)" | tee -a "$summary"; cat "$out/deps.log"; exit 1; fi
cat "$out/deps.log"
export -f build
export root build_dir jobs HULK_GPU_CHECK_CUDA_FLAGS="${cuda_flags[*]}"
py_env=(env PYTHONPATH="$root/$build_dir-py" PYTHONUNBUFFERED=1)

bench() {  # bench ARGS...: bench_gpu.py, rows appended to $out/bench_rows.jsonl as they finish
  local size_args=("$@")
  # shellcheck disable=SC2206
  [ "$dry" = 1 ] && size_args=(--allow-simulated --sizes 300,1000 --widths 8,33 --repeats 1 --warmup 0 --epochs 1 \
    "${@:1:2}")  # keep --kinds
  # shellcheck disable=SC2086
  step bench bench.log "${py_env[@]}" bash -c 'cd /tmp && exec python3 "$0" "$@"' "$root/benchmarks/bench_gpu.py" \
    "${size_args[@]}" --rows "$out/bench_rows.jsonl" --out "$out/RESULTS.md" ${BENCH_ARGS:-}
  if [ "$stage" = bench3 ]; then
    python3 benchmarks/bench_gpu.py --memory-plan --sizes 4e6 --widths 64,256 \
      --device-gib "$( [ "$dry" = 1 ] && echo 80 || nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | awk '{print $1 / 1024}')" \
      >>"$out/bench.log" 2>&1
  fi
}

case "$stage" in
  build)
    step build build.log build &&
      step ctest ctest.log ctest --test-dir "$build_dir" -L cuda --output-on-failure -j "$( [ "$dry" = 1 ] && echo "$jobs" || echo 1)"
    [ -d "$build_dir-py/hulk" ] &&
      step pytest pytest.log "${py_env[@]}" bash -c "cd /tmp && python3 -m pytest '$root/tests/python' -q -p no:cacheprovider -m cuda \
        && python3 -m pytest '$root/tests/python/test_package.py' -q -p no:cacheprovider -k shared_cxx_runtime"
    ;;
  sanitize)
    # Simt.CheckMacroReportsFileLineExpressionAndError makes a CUDA call fail on purpose (an
    # invalid device ordinal), which memcheck reports as an API error: it is left out of the
    # sanitised set. racecheck leaves out cuSPARSE's own kernels: on the first H200 run
    # (2026-11-26) its only hazards were shared-memory writes inside cusparse::csrmv_v3_kernel
    # (the library's SpMM with one column), with memcheck clean on the same inputs.
    filter="${SANITIZE_FILTER:-CudaOps.*:CudaModel.MovesBetweenDevicesAndSavesAcrossThem:Simt*-Simt.CheckMacroReportsFileLineExpressionAndError}"
    if step build build.log build hulk_cuda_tests; then
      for tool in memcheck racecheck synccheck; do
        if [ "$dry" = 1 ]; then  # no compute-sanitizer without a GPU: the same tests and filter, plainly
          step "$tool" "$tool.log" "$build_dir/tests/cpp/hulk_cuda_tests" --gtest_filter="$filter"
        else
          extra=()
          [ "$tool" = racecheck ] && extra=(--kernel-name-exclude kns=cusparse)
          step "$tool" "$tool.log" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 1 \
            "$build_dir/tests/cpp/hulk_cuda_tests" --gtest_filter="$filter"
        fi
      done
    fi
    ;;
  cpp)
    # One OpenMP thread per test and as many tests at once as cores: on the third H200 run
    # (2026-11-28) `ctest -j 16` with 16 threads per test took 50-108 s for training tests that
    # take seconds alone, and 23 of 245 tests had not finished after 200 s. With one thread per
    # test the dry run here (SIMT build, 2 cores, -j 2) ran all 245 in 6 s.
    step build build.log build &&
      step ctest ctest.log env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
        ctest --test-dir "$build_dir" -LE cuda --output-on-failure -j "$jobs"
    ;;
  bench1)
    if step build build.log build _core; then
      bench --kinds uniform --sizes 1e4,1e5,1e6
      step learned learned.log "${py_env[@]}" bash -c 'cd /tmp && exec python3 "$0" "$@"' "$root/benchmarks/bench_learned.py" \
        --inference-only --out "$out/RESULTS.md" $( [ "$dry" = 1 ] && echo "--inference-n 2000")
    fi
    ;;
  bench2) step build build.log build _core && bench --kinds powerlaw --sizes 1e4,1e5,1e6 ;;
  bench3) step build build.log build _core && bench --kinds uniform,powerlaw --sizes 4e6 ;;
esac

echo
if [ -f "$out/bench_rows.jsonl" ]; then
  echo "== $stage: bench_gpu rows ($(wc -l <"$out/bench_rows.jsonl") finished) =="
  sed -n '/<!-- bench_gpu:begin -->/,/<!-- bench_gpu:end -->/p' "$out/RESULTS.md" 2>/dev/null | grep '^|' ||
    python3 benchmarks/bench_gpu.py --from-rows "$out/bench_rows.jsonl" --out "$out/RESULTS.md" | grep '^|'
fi
[ -f "$out/learned.log" ] && echo "== learned planner inference ==" && tail -n 1 "$out/learned.log"
echo "== gpu_check $stage: $(sed -n 3p "$summary") (${SECONDS} s) =="
grep -E ': (PASS|FAIL|NOT RUN)' "$summary"
echo "stage $stage: $([ $status -eq 0 ] && echo PASS || echo FAIL) in ${SECONDS} s" | tee -a "$summary"
exit $status
