#!/usr/bin/env bash
# Template points and searches on the GPU node, side by side: each point (a CUDA template with its parameters
# set) is rendered (`kevolve kb template --set`) and evaluated by `kevolve eval --backend cuda --json` (the
# libtorch reference timed by the same evaluator in the same call); then one directed template search per
# problem named in --searches (greedy, budget evaluations), whose best is re-timed by the search itself.
# Prints one line per point, and each search's last lines and its rate; everything it writes goes to the
# output folder (default gpu-points).
# Usage: tools/gpu_template_points.sh [--out DIR] [--budget N] [--points "PROBLEM:k=v,k=v[:MACRO=V,...] ..."]
#                                   [--searches "problem ..."]
#   PROBLEM:k=v,...: the template's parameters set (the others at their defaults); MACRO=V: #defines put
#   first (a template's tuning macros, e.g. map_id's KV_HASH_COMPACT=0); --searches: the problems searched
#   after the points (default none), each timed from start to report.
# Needs the node bundle (tools/bundle_node.sh, dist/kevolve-node); builds the CUDA worker when it is missing.
# KEVOLVE_CUDA_WORKER, when set, names the worker that evaluates instead of the bundle's.
set -uo pipefail
cd "$(dirname "$0")/.."
out=gpu-points budget=16 searches="" points=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --searches) searches=$2; shift 2 ;;
    *) echo "gpu_template_points: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
bin=dist/kevolve-node/bin
[ -x $bin/kevolve ] || { echo "gpu_template_points: no node bundle in dist/kevolve-node: run tools/bundle_node.sh" >&2; exit 2; }
if [ -z "${KEVOLVE_CUDA_WORKER:-}" ]; then  # set: that worker evaluates (e.g. an older build, for a side-by-side)
  [ -x $bin/kevolve-cuda-eval ] || tools/build_cuda_worker.sh "$bin" || exit 1
  export KEVOLVE_CUDA_WORKER=$PWD/$bin/kevolve-cuda-eval
fi
export KEVOLVE_TEST_SOURCE_DIR=$PWD
mkdir -p "$out/points"
[ -n "$points" ] && echo "== template points (kevolve eval --backend cuda; candidate and reference in one call)"
for p in $points; do
  IFS=: read -r problem sets defines <<< "$p"
  name="$problem-${sets//[=,]/-}${defines:+-${defines//[=,]/-}}"
  prefix=""
  for d in ${defines//,/ }; do prefix+="#define ${d%%=*} ${d#*=}"$'\n'; done
  args=()
  for kv in ${sets//,/ }; do args+=(--set "$kv"); done
  { printf '%b' "$prefix"
    $bin/kevolve kb template "$problem" --knowledge knowledge --hardware nvidia-hopper "${args[@]}"; } \
    > "$out/points/$name.cu" || { echo "$name: the template did not render"; continue; }
  $bin/kevolve eval --backend cuda --problem "$problem" -c "$out/points/$name.cu" --json \
    > "$out/points/$name.json" 2> "$out/points/$name.log"
  python3 - "$out/points/$name.json" "$name" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]}: no verdict ({e})"); sys.exit(0)
if d["status"] != "ok":
    print(f"{sys.argv[2]}: {d['status']} {d.get('reason','')}: {d['message'][:300]}"); sys.exit(0)
print(f"{sys.argv[2]}: {d['candidate_ms']:.4f} ms (p10 {d['candidate_p10_ms']:.4f}, p90 {d['candidate_p90_ms']:.4f}) "
      f"vs reference {d['reference_ms']:.4f} ms: {d['speedup']:.2f}x, {d['candidate_gbps']:.0f} GB/s")
PY
done
for problem in $searches; do
echo "== directed template search of $problem (budget $budget)"
tools/gpu_search_config.sh "$problem" "$problem-$(date +%s)" "$budget" "$out/store" 0 > "$out/search-$problem.toml"
start=$(date +%s.%N)
KEVOLVE_NSIGHT=0 $bin/kevolve run "$out/search-$problem.toml" --out "$out/report-$problem" > "$out/search-$problem.log" 2>&1
rc=$?
wall=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
n=$(grep -o "^search .*: [0-9]* evaluated" "$out/search-$problem.log" | grep -o "[0-9]* evaluated" | cut -d' ' -f1)
echo "$problem: exit $rc, ${n:-?} evaluations in $wall s ($(python3 -c "print(f'{60 * ${n:-0} / $wall:.1f}')") per minute, re-timing and report included)"
grep "^best:" "$out/search-$problem.log"
for f in "$out/report-$problem"/best/*; do [ -f "$f" ] && { echo "best source: $(head -1 "$f")"; break; }; done
done
