#!/usr/bin/env bash
# The main job on its embedded default: installs dependencies, builds, and evaluates the bundled fast
# RMSNorm candidate against libtorch on this machine's CPU (verification on every shape, then timing).
# Usage (as root on Debian 12): tools/quickstart.sh [extra `kevolve eval` options]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
./build/bin/kevolve eval --problem rmsnorm_fwd --candidate problems/core/rmsnorm_fwd/fast.cpp "$@"
