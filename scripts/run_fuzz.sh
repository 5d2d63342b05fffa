#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer and runs each briefly, starting from its seed corpus in
# tests/fuzz/corpus/. Installs clang, libFuzzer and clang's OpenMP with apt when missing.
# Usage: scripts/run_fuzz.sh [SECONDS per target, default 25]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-25}"

source scripts/apt_missing.sh
apt_install_missing clang libomp-dev
# libFuzzer comes with clang on some releases and in libclang-rt-dev on others (Debian 12).
probe="$(mktemp -d)"
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$probe/p.cpp"
clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null || apt_install_missing libclang-rt-dev
rm -rf "$probe"

CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHULK_BUILD_FUZZ=ON \
  -DHULK_SANITIZE=ON -DHULK_CUDA=OFF -DHULK_BUILD_TESTS=OFF -DHULK_BUILD_PYTHON=OFF >/dev/null
cmake --build build/fuzz -j "$(nproc)" --target fuzz_weight_file fuzz_csr

export OMP_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for target in weight_file csr; do
  echo "== fuzz_${target}: ${seconds} s from tests/fuzz/corpus/${target} =="
  work="build/fuzz/corpus-${target}"  # inputs found go here; the committed seed corpus stays as it is
  crashes="build/fuzz/crashes-${target}"
  log="build/fuzz/fuzz_${target}.log"
  mkdir -p "$work" "$crashes"
  # -malloc_limit_mb: one allocation above 256 MB is a finding (the loader must bound sizes by
  # the bytes in the file); -rss_limit_mb bounds the whole process.
  set +e
  "build/fuzz/tests/fuzz/fuzz_${target}" "$work" "tests/fuzz/corpus/${target}" -max_total_time="$seconds" \
    -max_len=4096 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1 \
    -artifact_prefix="$crashes/" >"$log" 2>&1
  rc=$?
  set -e
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "fuzz_${target} found a problem (exit $rc); the input is in $crashes/" >&2
    exit 1
  fi
done
