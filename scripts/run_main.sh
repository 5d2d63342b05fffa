#!/usr/bin/env bash
# The main job on the bundled data: set up, then train the classifier on the paper's
# 47-server cluster with its Table 2 labels and print the epochs and each machine's class.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd /tmp && hulk classify "$@"
