#!/usr/bin/env bash
# The one script for the GPU node: builds the CUDA worker against the node's torch, runs the GPU tests,
# runs (or resumes) one offline CUDA search per core problem, measures the PyTorch baselines and writes
# the benchmark table. Everything it keeps lives in the state folder, so a run cut short (GPU time
# comes in slices of minutes) picks up where it stopped: finished searches are skipped, an interrupted
# one resumes from its RocksDB store.
#
# Last, it searches the KernelBench-format samples through the Python interpreter on the GPU (kevolve suite
# --budget: framework rewrites and template kernels wrapped as ModelNew, per problem), resumable likewise.
# Usage: tools/gpu_check.sh [--state DIR] [--budget N] [--kb-budget N] [--deadline SECONDS] [--skip-tests] [--only a,b]
#                           [--nsight a,b] [--redo a,b] [--no-suite] [--suite-only]
#   --state     state folder (default gpu-state): store/, reports/, baselines.json, tests.log, table.md,
#               kb-store/ and kernelbench.md (the KernelBench-format suite)
#   --budget    evaluations per search (default 14)
#   --kb-budget evaluations per KernelBench-format problem's search (default 4)
#   --deadline  stop starting/continuing searches after this many seconds (default 520)
#   --nsight    problems whose best kernel gets an Nsight Compute profile (default: all; "none" for none)
#   --redo      start these problems' searches again under a new search id (e.g. after their problem.toml
#               changed); the old searches stay in the store
#   --no-suite  leave out the KernelBench-format suite this time
#   --suite-only only the KernelBench-format suite (no worker build, GPU tests, searches, cluster or baselines)
# Between the searches and the baselines it runs a short search as a cluster over loopback (kevolve node +
# kevolve evaluator --backend cuda, separate processes); cluster.log records it.
# Needs the node bundle from the build machine: tools/bundle_node.sh (dist/kevolve-node).
set -uo pipefail
cd "$(dirname "$0")/.."
state=gpu-state budget=14 kb_budget=4 deadline=520 tests=1 only="" nsight=all redo="" suite=1 core=1
while [ $# -gt 0 ]; do
  case "$1" in
    --state) state=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --kb-budget) kb_budget=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    --skip-tests) tests=0; shift ;;
    --only) only=$2; shift 2 ;;
    --nsight) nsight=$2; shift 2 ;;
    --redo) redo=$2; shift 2 ;;
    --no-suite) suite=0; shift ;;
    --suite-only) core=0; tests=0; shift ;;
    *) echo "gpu_check: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
start=$(date +%s)
left() { echo $(( deadline - ($(date +%s) - start) )); }
bin=dist/kevolve-node/bin
[ -x $bin/kevolve ] || { echo "gpu_check: no node bundle in dist/kevolve-node: run tools/bundle_node.sh where kevolve was built" >&2; exit 2; }
mkdir -p "$state/reports" "$state/configs" "$state/ids"
nvidia-smi -L || { echo "gpu_check: no GPU" >&2; exit 2; }

if [ $core = 1 ] && { [ ! -x $bin/kevolve-cuda-eval ] || [ -n "$(find backends runtime -newer $bin/kevolve-cuda-eval -name '*.[ch]pp' | head -1)" ]; }; then
  tools/build_cuda_worker.sh "$bin" || exit 1
fi
export KEVOLVE_CUDA_WORKER=$PWD/$bin/kevolve-cuda-eval KEVOLVE_TEST_SOURCE_DIR=$PWD
export KEVOLVE_PY_EVAL=$PWD/backends/python/kevolve_py_eval.py  # the Python interpreter's scripts of this copy
export KEVOLVE_CACHE_DIR=$PWD/$state/cache  # the reference's torch.compile timings, kept with the state across calls

if [ $tests = 1 ] && [ -x $bin/test_cuda_backend ]; then
  echo "== GPU tests"
  # On a GPU machine no GPU test may fail or be skipped: a skip here means the worker or the device is missing.
  $bin/test_cuda_backend > "$state/tests.log" 2>&1
  rc=$?
  tail -4 "$state/tests.log"
  if [ $rc -ne 0 ]; then echo "gpu_check: GPU tests FAILED (exit $rc; $state/tests.log)" >&2; exit 1; fi
  if grep -q "KEVOLVE-SKIPPED" "$state/tests.log"; then
    grep "KEVOLVE-SKIPPED" "$state/tests.log" | sort | uniq -c >&2
    echo "gpu_check: GPU tests were SKIPPED on a GPU machine ($state/tests.log)" >&2
    exit 1
  fi
fi


[ $core = 1 ] && echo "== searches (budget $budget evaluations each)"
for t in knowledge/templates/cuda/*/; do
  [ $core = 1 ] || break
  p=$(basename "$t")
  [ -n "$only" ] && [[ ",$only," != *",$p,"* ]] && continue
  rep="$state/reports/$p/report.json"
  if [[ ",$redo," == *",$p,"* ]]; then echo "cuda-$p-$(date +%s)" > "$state/ids/$p"; rm -rf "$state/reports/$p"; fi
  id=$(cat "$state/ids/$p" 2>/dev/null || echo "cuda-$p")
  if [ -s "$rep" ] && grep -q '"finished":true' "$rep"; then echo "$p: done"; continue; fi
  if [ "$(left)" -le 30 ]; then echo "gpu_check: deadline reached; run again to continue"; break; fi
  tools/gpu_search_config.sh "$p" "$id" "$budget" "$state/store" 60 > "$state/configs/$p.toml"
  ns=0; { [ "$nsight" = all ] || [[ ",$nsight," == *",$p,"* ]]; } && ns=1
  KEVOLVE_NSIGHT=$ns timeout --signal=INT "$(left)" $bin/kevolve run "$state/configs/$p.toml" --out "$state/reports/$p" 2>&1 | tail -3
done
# The cluster over loopback: a `kevolve node` and a CUDA `kevolve evaluator` as separate processes run a
# short search (the node builds with NVRTC; the evaluator receives the kernel image with each job).
if [ $core = 1 ] && ! grep -q "^search cluster-gpu: " "$state/cluster.log" 2>/dev/null && [ "$(left)" -gt 60 ]; then
  echo "== cluster over loopback: kevolve node + kevolve evaluator --backend cuda"
  export KEVOLVE_EVALUATOR_KEY=gpu-check-loopback-evaluator-$$ KEVOLVE_CONSOLE_KEY=gpu-check-loopback-console-$$
  cat > "$state/configs/cluster.toml" <<CFG
[search]
problem = "rmsnorm_fwd"
id = "cluster-gpu"
backend = "cuda"
operator = "template"
directed = true
max_in_flight = 3
retime_top = 1
[strategy]
name = "greedy"
[budget]
evaluations = 6
[store]
path = "$state/cluster-store"
checkpoint_seconds = 0
[eval]
min_time = 0.2
arch = "sm_90"
[cluster]
listen = "127.0.0.1:0"
CFG
  : > "$state/cluster.log"
  KEVOLVE_NSIGHT=0 timeout --signal=INT "$(left)" $bin/kevolve node --config "$state/configs/cluster.toml" --out "$state/cluster-report" \
    >> "$state/cluster.log" 2>&1 & node=$!
  for _ in $(seq 100); do grep -q "listening on" "$state/cluster.log" && break; sleep 0.1; done
  port=$(grep -o "listening on 127.0.0.1:[0-9]*" "$state/cluster.log" | head -1 | cut -d: -f2)
  $bin/kevolve evaluator --join "127.0.0.1:$port" --backend cuda > "$state/cluster-evaluator.log" 2>&1 & ev=$!
  sleep 15; $bin/kevolve-console "127.0.0.1:$port" devices >> "$state/cluster.log" 2>&1
  wait $node; kill $ev 2>/dev/null; wait $ev 2>/dev/null
  tail -4 "$state/cluster.log"
fi

# The baselines come after the searches (GPU time goes to the searches first) and measure only the problems
# that baselines.json does not have yet; each problem is saved as soon as it is measured.
if [ $core = 1 ] && [ "$(left)" -gt 20 ]; then
  echo "== PyTorch baselines (eager, torch.compile; max-autotune too where compile comes closest to the floor)"
  timeout "$(left)" python3 tools/torch_baselines.py --out "$state/baselines.json" \
    --max-autotune rmsnorm_fwd,layernorm_fwd,softmax_rows 2>&1 | grep -v Warning
fi
[ $core = 1 ] && python3 tools/gpu_bench_table.py "$state" | tee "$state/table.md"

# KernelBench-format problems through the Python interpreter on the GPU: per problem the reference baseline, a
# search of --kb-budget evaluations (framework rewrites; for softmax, layer norm and RMS norm also the CUDA
# templates' kernels wrapped as ModelNew), then its best kernel and best rewrite evaluated again, against eager
# and torch.compile. The searches and each finished problem's result stay in kb-store/, so a run cut short (TERM
# from timeout: the search stops cleanly) resumes where it stopped; the table is written when every problem is done.
# With several GPUs, one shard of the problems per GPU (CUDA_VISIBLE_DEVICES, a store each), then one run that
# only tabulates (every problem finished in one of the stores).
if [ $suite = 1 ] && [ ! -s "$state/kernelbench.md" ] && [ "$(left)" -gt 60 ]; then
  gpus=$(nvidia-smi -L | grep -c '^GPU')
  echo "== kevolve suite problems/kernelbench-small --backend cuda --budget $kb_budget ($gpus GPU(s): one shard each)"
  suite_args=(problems/kernelbench-small --backend cuda --budget "$kb_budget")
  rm -f "$state"/kb-shard-*.log
  pids=()
  for k in $(seq 0 $((gpus - 1))); do
    from=()
    for s in "$state"/kb-store-*; do [ -d "$s" ] && [ "$s" != "$state/kb-store-$k" ] && from+=(--results-from "$s"); done
    CUDA_VISIBLE_DEVICES=$k timeout -k 30 "$(left)" $bin/kevolve suite "${suite_args[@]}" --shard "$k/$gpus" --store "$state/kb-store-$k" \
      "${from[@]}" > "$state/kb-shard-$k.md" 2> "$state/kb-shard-$k.log" & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  for k in $(seq 0 $((gpus - 1))); do tail -n 3 "$state/kb-shard-$k.log"; done
  from=()
  for s in "$state"/kb-store-*; do [ -d "$s" ] && [ "$s" != "$state/kb-store-0" ] && from+=(--results-from "$s"); done
  # Tabulates when every problem is finished somewhere; otherwise it would search the rest: not within this call.
  if grep -q "was not searched" "$state"/kb-shard-*.md; then
    grep -h "was not searched" "$state"/kb-shard-*.md | head -5
  elif ! grep -q "interrupted\|did not finish" "$state"/kb-shard-*.log; then
    timeout -k 30 "$(left)" $bin/kevolve suite "${suite_args[@]}" --store "$state/kb-store-0" "${from[@]}" --out "$state/kernelbench.md" \
      > /dev/null 2>> "$state/kb-merge.log"
  fi
  [ -s "$state/kernelbench.md" ] && cat "$state/kernelbench.md" || echo "gpu_check: the KernelBench suite did not finish; run again to resume it"
fi
