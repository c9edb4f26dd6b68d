#!/usr/bin/env bash
# The Python interpreter on a GPU, without the C++ build: runs backends/python/kevolve_py_eval.py the way
# python_backend.cpp does (one-shot, --json) on a KernelBench-size problem, the CUDA-confinement cheaters, the
# queued-work cheater (with its detector on and off), a hang and a problem too large for the device; prints one
# line per evaluation (status, reason, speedup, phases) and keeps the JSON results in $OUT (or ./gpu-python-eval).
# Usage: tools/gpu_python_eval.sh [quick]   (quick: leaves out the 6.4 GB problem)
set -u
out=${OUT:-gpu-python-eval}
mkdir -p "$out"
py=${KEVOLVE_PYTHON:-python3}
ev=backends/python/kevolve_py_eval.py
cache=$(mktemp -d)/compile.json
{ id; uname -r; nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader; ls -l /dev/nvidia* 2>&1 | head -8
  grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status; $py -c 'import torch; print("torch", torch.__version__)'; } > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
run() {  # NAME LIMIT_S PROBLEM CANDIDATE [ARGS...]
  local name=$1 limit=$2 problem=$3 cand=$4; shift 4
  local t0=$(date +%s.%N)
  timeout "$limit" $py $ev --json --device cuda --threads 1 --problem "$problem" --candidate "$cand" --timeout 20 \
    --compile-cache "$cache" "$@" > "$out/$name.json" 2> "$out/$name.err"
  local rc=$? t1=$(date +%s.%N)
  $py - "$out/$name.json" "$name" "$rc" "$t0" "$t1" <<'PY'
import json, sys
path, name, rc, t0, t1 = sys.argv[1:]
wall = "%.1f" % (float(t1) - float(t0))
try:
    r = json.load(open(path))
except Exception:
    print("%-28s rc=%s no JSON (%s s)" % (name, rc, wall)); sys.exit()
ph = " ".join("%s=%.2f" % kv for kv in (r.get("phases") or {}).items())
print("%-28s %-13s %-14s x%-6.3g %s s | %s" % (name, r["status"], r.get("reason", ""), r.get("speedup", 0), wall, ph))
if r["status"] != "ok" or name.startswith("honest") or name.startswith("large"):
    print("    message: %s" % r["message"][:400])
    print("    sandbox: %s" % r.get("sandbox", ""))
    if r.get("memory"): print("    memory: %s" % r["memory"])
    if r.get("runner_log"): print("    runner log: %s" % r["runner_log"][-600:].replace("\n", " | "))
PY
}
small=problems/kernelbench-small  # the small samples
S=$small/4_softmax.py
R=$small/1_relu.py
C=tests/backends/python/cheaters
L=tests/fixtures/kernelbench/softmax_dim1_large.py
if [ "${1:-}" = large ]; then  # the queued-work cheater where a reference call outlasts a GPU time slice; serve mode
  run queued_work_large_detector_off 120 $L $C/queued_work.py --detector-off queued_work
  run queued_work_large 120 $L $C/queued_work.py
  run patched_runner_clock 60 $R $C/patched_runner_clock.py
  run unchecked_calls 60 $R $C/unchecked_calls.py
  run cached_by_pointer_sampled 60 $S $C/cached_by_pointer_sampled.py
  # Serve mode, as kevolve runs it: one evaluator process, the next runner started ahead; two evaluations.
  req=$($py -c 'import json,sys; print(json.dumps({"argv": ["--json", "--device", "cuda", "--threads", "1", "--problem", sys.argv[1], "--candidate", sys.argv[2], "--compile-cache", sys.argv[3]]}))' \
        $L tests/backends/python/honest/softmax_dim1_large__honest.py "$cache")
  t0=$(date +%s.%N)
  printf '%s\n%s\n%s\n' "$req" "$req" "$req" | timeout 200 $py $ev --serve > "$out/serve.jsonl" 2> "$out/serve.err"
  echo "serve: 3 evaluations in $($py -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" $t0 $(date +%s.%N)) s (the process's start, torch's import and the compile baseline's first measurement included)"
  $py -c '
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    r = json.loads(line)
    print("serve %d: %s %s | %s" % (i, r["status"], r["message"][:120], " ".join("%s=%.2f" % kv for kv in r.get("phases", {}).items())))' "$out/serve.jsonl"
  exit 0
fi
run honest_softmax 120 $S tests/backends/python/honest/4_softmax__honest.py
run reads_evaluator_memory 60 $R $C/reads_evaluator_memory.py
run renices_evaluator 60 $R $C/renices_evaluator.py
run makes_fifo 60 $R $C/makes_fifo.py
run opens_socket 60 $R $C/opens_socket.py
run queued_work 90 $S $C/queued_work.py
run queued_work_detector_off 90 $S $C/queued_work.py --detector-off queued_work
run pickled_output 60 $R $C/pickled_output.py
run hangs 60 $R tests/backends/python/crashers/hangs.py --timeout 3
if [ "${1:-}" != quick ]; then
  run large_softmax_6.4GB 300 tests/fixtures/kernelbench/softmax_dim1_large.py tests/backends/python/honest/softmax_dim1_large__honest.py
  run too_large 120 tests/fixtures/kernelbench/relu_too_large.py tests/backends/python/honest/1_relu__honest.py
fi
