#!/usr/bin/env bash
# Builds the CUDA worker (kevolve-cuda-eval, kevolve-cuda-runner) ON THE GPU NODE, against the libtorch of
# the torch installed there (python3 -c 'import torch') and the CUDA toolkit there (nvcc, cudart). The node
# binary links no libtorch; libtorch is far too big to ship.
# Usage: tools/build_cuda_worker.sh [DEST_BIN_DIR]   (default: dist/kevolve-node/bin, next to kevolve)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-dist/kevolve-node/bin}
py=${PYTHON:-python3}
torch_root=$("$py" -c 'import torch, os; print(os.path.dirname(torch.__file__))') ||
  { echo "build_cuda_worker: '$py' cannot import torch: install torch with CUDA on this node, or set PYTHON" >&2; exit 2; }
abi=$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
cuda_ok=$("$py" -c 'import torch; print(int(torch.version.cuda is not None))')
[ "$cuda_ok" = 1 ] || { echo "build_cuda_worker: this torch ($torch_root) has no CUDA" >&2; exit 2; }
export PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
command -v nvcc >/dev/null || { echo "build_cuda_worker: no nvcc (set CUDA_HOME)" >&2; exit 2; }
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S backends/cuda -B build-cuda "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTORCH_ROOT="$torch_root" -DTORCH_CXX11_ABI="$abi" >/dev/null
cmake --build build-cuda -j "$(nproc)"
mkdir -p "$dest"
cp build-cuda/kevolve-cuda-eval build-cuda/kevolve-cuda-runner "$dest/"
echo "build_cuda_worker: kevolve-cuda-eval and kevolve-cuda-runner in $dest (torch $("$py" -c 'import torch;print(torch.__version__)'), $(nvcc --version | tail -1))"
