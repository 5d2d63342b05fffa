#!/usr/bin/env bash
# Installs everything hulk needs on a fresh Debian/Ubuntu machine, then the package itself.
# System: a C++17 compiler, CMake, Ninja, OpenBLAS, GoogleTest. Python: numpy, networkx,
# pytest, scipy (pulled in by `pip install -e .[test]`). nvcc is optional: when it is on PATH
# the CUDA backend is compiled too (HULK_CUDA=AUTO|ON|OFF overrides).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/apt_missing.sh
apt_install_missing g++ cmake ninja-build pkg-config libopenblas-dev libgtest-dev

python3 -m pip install -q --upgrade pip >/dev/null
echo "setup: building and installing hulk (C++ core, pybind11 extension), editable: the extension is"
echo "       built into hulk/ here, so \`import hulk\` works in this checkout and anywhere else"
python3 -m pip install -q -e ".[test]"
