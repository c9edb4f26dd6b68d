#!/usr/bin/env bash
# The main job on its embedded default: installs dependencies, builds, and runs configs/quickstart.toml —
# a greedy CPU search on rmsnorm_fwd with the offline template operator and a local RocksDB store —
# then writes kevolve-out/quickstart/ (report.json, report.html, best/). Interrupted, it resumes.
# Usage (as root on Debian 12): tools/quickstart.sh [extra `kevolve run` options]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
./build/bin/kevolve run configs/quickstart.toml --out kevolve-out/quickstart "$@"
