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
set +e
(cd build && ctest --output-on-failure -j "$(nproc)" "$@")
rc=$?
set -e
echo "tests: $(( $(date +%s) - start )) s"
# What was skipped here, and why (tests print "KEVOLVE-SKIPPED: <why>"; ctest lists them as Skipped).
if grep -q "^KEVOLVE-SKIPPED: " build/Testing/Temporary/LastTest.log 2>/dev/null; then
  echo "skipped on this machine:"
  grep -h "^KEVOLVE-SKIPPED: " build/Testing/Temporary/LastTest.log | sed 's/^KEVOLVE-SKIPPED: /  /' | sort | uniq -c
fi
exit $rc
