#!/usr/bin/env bash
# Installs every build and run dependency of kevolve from Debian 12 packages (run as root).
# Usage: tools/setup.sh        Idempotent: packages already present are skipped by apt.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache git ca-certificates
  libtorch-dev libopenblas0-pthread        # reference implementations (trusted evaluator only)
  python3-torch                            # the sandbox's own tests (a cheater that shells out to PyTorch), exported extensions
  python3-dev pybind11-dev python3-setuptools  # building an exported PyTorch extension (kevolve export)
  libtomlplusplus-dev libcli11-dev          # problem specs, command line
  libkainjow-mustache-dev                   # kernel templates
  libxapian-dev                             # knowledge-base retrieval (BM25)
  libboost-dev libssl-dev libsimdjson-dev   # LLM providers (HTTP/HTTPS client, JSON replies)
  zlib1g-dev                                # LLM replies a proxy gzipped
  libseccomp-dev                            # candidate runner sandbox
  librocksdb-dev                            # the search store (storage/ only)
  libcaf-dev                                # the actor engine (actors/ only)
  libmimalloc-dev                           # kevolve's allocator (the engine's per-candidate allocations; optional)
  catch2                                    # tests
  iproute2                                  # the cluster's network-cut test (ip netns; skipped without the privilege)
  chromium                                  # the dashboard's browser test (headless; ~122 MB download, ~411 MB installed)
  hipcc libamdhip64-dev libamd-comgr-dev rocm-device-libs rocminfo rocm-smi  # AMD: HIP builds for gfx90a/gfx908/gfx1030
                                            # and the HIP worker (ROCm 5.2; ~67 MB download, ~270 MB installed)
)
if [ "$(id -u)" -ne 0 ]; then echo "tools/setup.sh: run as root (it installs Debian packages)" >&2; exit 1; fi
missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "tools/setup.sh: all dependencies present"
