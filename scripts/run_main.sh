#!/usr/bin/env bash
# The main job on the bundled data: set up, then plan the paper's four jobs on its 47-server
# cluster with Systems A/B/C, Search and Hulk, and print per-job times and the makespan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
hulk plan "$@"
