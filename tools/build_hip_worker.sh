#!/usr/bin/env bash
# Builds the HIP worker (kevolve-hip-eval, kevolve-hip-runner) ON AN AMD GPU NODE, against the libtorch of
# the ROCm build of torch installed there (python3 -c 'import torch'; torch.version.hip set) and the ROCm
# there (/opt/rocm, or ROCM_PATH). The node binary links no libtorch.
# Usage: tools/build_hip_worker.sh [DEST_BIN_DIR]   (default: dist/kevolve-node/bin, next to kevolve)
# Not run on AMD hardware by this project (none is reachable from its machines): see docs/hip.md.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-dist/kevolve-node/bin}
py=${PYTHON:-python3}
rocm=${ROCM_PATH:-/opt/rocm}
torch_root=$("$py" -c 'import torch, os; print(os.path.dirname(torch.__file__))') ||
  { echo "build_hip_worker: '$py' cannot import torch: install a ROCm build of torch on this node, or set PYTHON" >&2; exit 2; }
abi=$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
hip_ok=$("$py" -c 'import torch; print(int(getattr(torch.version, "hip", None) is not None))')
[ "$hip_ok" = 1 ] || { echo "build_hip_worker: this torch ($torch_root) is not a ROCm build (torch.version.hip is None)" >&2; exit 2; }
[ -e "$rocm/include/hip/hip_runtime_api.h" ] || { echo "build_hip_worker: no HIP headers under $rocm (set ROCM_PATH)" >&2; exit 2; }
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S backends/hip -B build-hip "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DROCM_PATH="$rocm" -DTORCH_ROOT="$torch_root" -DTORCH_CXX11_ABI="$abi" >/dev/null
cmake --build build-hip -j "$(nproc)"
mkdir -p "$dest"
cp build-hip/kevolve-hip-eval build-hip/kevolve-hip-runner "$dest/"
echo "build_hip_worker: kevolve-hip-eval and kevolve-hip-runner in $dest (torch $("$py" -c 'import torch;print(torch.__version__)'), HIP $("$py" -c 'import torch;print(torch.version.hip)'))"
