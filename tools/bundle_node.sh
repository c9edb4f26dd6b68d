#!/usr/bin/env bash
# Bundles the node binaries (kevolve, kevolve-nvrtc) with the shared libraries they need into one folder
# that runs on a GPU node with no package access (glibc 2.36 or newer; the C and C++ runtimes of the node
# are used). The CUDA worker is NOT in the bundle: build it on the node against its own libtorch with
# tools/build_cuda_worker.sh, which puts it next to kevolve in the bundle.
# Usage: tools/bundle_node.sh [OUT_DIR]   (default dist/kevolve-node; needs a finished build in ./build)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist/kevolve-node}
for b in kevolve kevolve-nvrtc kevolve-console; do
  [ -x "build/bin/$b" ] || { echo "bundle_node: build/bin/$b is missing: run tools/build.sh first" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
bins=(build/bin/kevolve build/bin/kevolve-nvrtc build/bin/kevolve-console)
# The GPU tests travel too when built (tools/gpu_check.sh runs them on the node).
for t in test_cuda_backend test_python_backend; do [ -x "build/bin/$t" ] && bins+=("build/bin/$t"); done
cp "${bins[@]}" "$out/bin/"
# Every library ldd resolves, except the C/C++ runtime and the dynamic loader (the node's own are newer).
ldd "${bins[@]}" | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
strip --strip-unneeded "$out/bin/"* 2>/dev/null || true
echo "bundle_node: $out ($(du -sh "$out" | cut -f1)): bin/kevolve finds its libraries in lib/ (rpath \$ORIGIN/../lib)"
