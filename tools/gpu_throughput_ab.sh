#!/usr/bin/env bash
# Evaluations per GPU-minute, two CUDA workers side by side on one GPU node: the worker of this tree (the
# node bundle's, built by tools/build_cuda_worker.sh) and a worker built from another commit's sources
# (a tarball made with `git archive COMMIT | gzip`). The same kevolve binary, templates and search config
# run each problem's directed template search once with each worker, alternating (new, old, new, old ...),
# and the script prints evaluations per minute, the ratio, and each search's best.
# Usage: tools/gpu_throughput_ab.sh --old-src TARBALL [--problems "gelu rmsnorm_fwd"] [--budget 16]
#                                   [--out DIR] [--evals "problem ..."]
#   --evals: problems also evaluated once by `kevolve eval --json` with each worker at the template's
#   defaults, to print the evaluator's phase times side by side (before the searches).
# Needs the node bundle (tools/bundle_node.sh, dist/kevolve-node). Method and results: docs/benchmarks/cuda-h200.md.
set -uo pipefail
cd "$(dirname "$0")/.."
old_src="" problems="gelu rmsnorm_fwd" budget=16 out=gpu-ab evals=""
while [ $# -gt 0 ]; do
  case "$1" in
    --old-src) old_src=$2; shift 2 ;;
    --problems) problems=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --evals) evals=$2; shift 2 ;;
    *) echo "gpu_throughput_ab: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ -n "$old_src" ] && [ -f "$old_src" ] || { echo "gpu_throughput_ab: --old-src TARBALL is required" >&2; exit 2; }
bin=dist/kevolve-node/bin
[ -x $bin/kevolve ] || { echo "gpu_throughput_ab: no node bundle in dist/kevolve-node: run tools/bundle_node.sh" >&2; exit 2; }
mkdir -p "$out"
old=$PWD/$out/old-worker
if [ ! -x "$old/bin/kevolve-cuda-eval" ]; then
  rm -rf "$old" && mkdir -p "$old/src" && tar xzf "$old_src" -C "$old/src" || exit 1
  (cd "$old/src" && tools/build_cuda_worker.sh "$old/bin") > "$out/old-build.log" 2>&1 ||
    { echo "gpu_throughput_ab: the old worker did not build ($out/old-build.log)"; tail -20 "$out/old-build.log"; exit 1; }
fi
[ -x $bin/kevolve-cuda-eval ] || tools/build_cuda_worker.sh "$bin" > "$out/new-build.log" 2>&1 ||
  { echo "gpu_throughput_ab: this tree's worker did not build ($out/new-build.log)"; exit 1; }
export KEVOLVE_TEST_SOURCE_DIR=$PWD
declare -A worker=([new]=$PWD/$bin/kevolve-cuda-eval [old]=$old/bin/kevolve-cuda-eval)
for problem in $evals; do
  $bin/kevolve kb template "$problem" --knowledge knowledge --hardware nvidia-hopper > "$out/$problem-default.cu" || continue
  for side in new old; do
    start=$(date +%s.%N)
    KEVOLVE_CUDA_WORKER=${worker[$side]} $bin/kevolve eval --backend cuda --problem "$problem" \
      -c "$out/$problem-default.cu" --json > "$out/eval-$problem-$side.json" 2> "$out/eval-$problem-$side.log"
    wall=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
    python3 - "$out/eval-$problem-$side.json" "$problem $side" "$wall" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"eval {sys.argv[2]}: no verdict ({e})"); sys.exit(0)
phases = [l for l in d.get("profile", "").splitlines() if l.startswith("evaluation phases")]
print(f"eval {sys.argv[2]}: {d['status']}, {d.get('candidate_ms', 0):.4f} ms, whole eval {sys.argv[3]} s; "
      + (phases[0] if phases else "(no phase line)"))
PY
  done
done
declare -A rate
for problem in $problems; do
  for side in new old; do
    tag=$problem-$side
    tools/gpu_search_config.sh "$problem" "$tag-$(date +%s)" "$budget" "$out/store-$tag" 0 > "$out/search-$tag.toml"
    start=$(date +%s.%N)
    KEVOLVE_CUDA_WORKER=${worker[$side]} KEVOLVE_NSIGHT=0 $bin/kevolve run "$out/search-$tag.toml" \
      --out "$out/report-$tag" > "$out/search-$tag.log" 2>&1
    rc=$?
    wall=$(python3 -c "import time; print(f'{time.time() - $start:.2f}')")
    n=$(grep -o "^search .*: [0-9]* evaluated" "$out/search-$tag.log" | grep -o "[0-9]* evaluated" | cut -d' ' -f1)
    rate[$tag]=$(python3 -c "print(f'{60 * ${n:-0} / $wall:.2f}')")
    echo "$tag: exit $rc, ${n:-?} evaluations in $wall s (${rate[$tag]} per minute, re-timing and report included); $(grep '^best:' "$out/search-$tag.log" | head -1)"
  done
  python3 -c "n, o = ${rate[$problem-new]}, ${rate[$problem-old]}; print(f'$problem: new / old = {n / o:.2f}x' if o > 0 else '$problem: no old rate')"
done
