#!/usr/bin/env bash
# assemble_package.sh BUILD_DIR OUT_DIR: a runnable copy of the hulk package in OUT_DIR/hulk, made of
# the Python sources and the extension built in BUILD_DIR by CMake (HULK_BUILD_PYTHON=ON). Used
# to test a build of another kind (SIMT, or nvcc for sm_90) beside the installed package:
# PYTHONPATH=OUT_DIR picks it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$1"
out="$2"
rm -rf "$out" && mkdir -p "$out"
cp -r "$root/hulk" "$out/"
rm -f "$out"/hulk/_core*.so  # an in-place build of the normal extension, if any
cp "$build"/_core*.so "$out/hulk/"
