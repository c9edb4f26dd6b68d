#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (ctest). Tests that need a GPU print
# why they are skipped.
# Usage (as root on Debian 12): tools/test.sh [extra ctest options]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
start=$(date +%s)
tools/build.sh
echo "build: $(( $(date +%s) - start )) s"
start=$(date +%s)
(cd build && ctest --output-on-failure -j "$(nproc)" "$@")
echo "tests: $(( $(date +%s) - start )) s"
