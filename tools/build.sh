#!/usr/bin/env bash
# Configures and builds kevolve (Release, Ninja, ccache when present) into ./build.
# Usage: tools/build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
