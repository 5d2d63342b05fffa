#!/usr/bin/env bash
# Fetches the Debian packages benchmarks/gpu_check.sh needs on a GPU machine that has no
# internet (OpenBLAS and GoogleTest), unpacked into .gpu-deps/root: name `.gpu-deps` in the
# device call's carry list. Run here, on a machine that reaches Debian's archive.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gpu-deps/' .git/info/exclude 2>/dev/null || echo '/.gpu-deps/' >> .git/info/exclude
rm -rf .gpu-deps && mkdir -p .gpu-deps/debs .gpu-deps/root
(cd .gpu-deps/debs && apt-get download libopenblas-dev libopenblas0-pthread libopenblas-pthread-dev libgtest-dev)
for f in .gpu-deps/debs/*.deb; do dpkg -x "$f" .gpu-deps/root; done
du -sh .gpu-deps
