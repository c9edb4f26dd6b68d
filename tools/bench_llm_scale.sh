#!/usr/bin/env bash
# How an LLM search scales with requests in flight: a local OpenAI-compatible endpoint answers each request
# after a latency drawn uniformly from [MIN, MAX] s (tools/llm_latency_server.py), and `kevolve run` searches
# with [llm] concurrency = N on the null backend (the evaluation costs nothing: what is measured is the LLM
# side). It prints the proposals per minute the endpoint answered in the steady window (from MAX s after the
# start to the end of the time budget) beside the rate N / mean latency allows, and the search process's peak RSS, threads and
# open sockets (sampled every second from /proc).
# Usage: tools/bench_llm_scale.sh [--concurrency 256] [--latency 10:60] [--seconds 240] [--rpm 0]
set -euo pipefail
cd "$(dirname "$0")/.."
conc=256 lat=10:60 secs=240 rpm=0
while [ $# -gt 0 ]; do
  case "$1" in
    --concurrency) conc=$2; shift 2 ;;
    --latency) lat=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --rpm) rpm=$2; shift 2 ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "bench_llm_scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
lo=${lat%%:*} hi=${lat##*:}
kevolve=build/bin/kevolve
[ -x "$kevolve" ] || { echo "bench_llm_scale.sh: $kevolve is missing: run tools/build.sh first" >&2; exit 2; }
dir=$(mktemp -d /tmp/kevolve-llm-scale.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 tools/llm_latency_server.py "$port" "$lo" "$hi" "$dir/server.jsonl" &
server=$!
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null && break; sleep 0.1; done
cat > "$dir/run.toml" <<TOML
[search]
problem = "softmax_rows"
id = "llm-scale"
operator = "llm"
backend = "null"
max_in_flight = $((conc + 64))
retime_top = 0
[strategy]
name = "evolutionary"
islands = 4
population = $(( (conc + 3) / 4 ))
[budget]
evaluations = 1000000
seconds = $secs
[store]
path = "$dir/store"
[llm]
provider = "openai"
endpoint = "http://127.0.0.1:$port/v1/chat/completions"
model = "bench-model"
concurrency = $conc
requests_per_minute = $rpm
timeout = $((hi * 2 + 30))
breaker = 0
TOML
start=$(date +%s.%N)
"$kevolve" run "$dir/run.toml" --out "$dir/out" > "$dir/run.log" 2>&1 &
run=$!
peak_rss=0 peak_threads=0 peak_sockets=0
while kill -0 $run 2>/dev/null; do
  if [ -r /proc/$run/status ]; then
    rss=$(awk '/VmHWM/ {print $2}' /proc/$run/status 2>/dev/null || echo 0)
    th=$(awk '/Threads/ {print $2}' /proc/$run/status 2>/dev/null || echo 0)
    so=$(ls -l /proc/$run/fd 2>/dev/null | grep -c socket: || true)
    [ "${rss:-0}" -gt "$peak_rss" ] && peak_rss=$rss
    [ "${th:-0}" -gt "$peak_threads" ] && peak_threads=$th
    [ "${so:-0}" -gt "$peak_sockets" ] && peak_sockets=$so
  fi
  sleep 1
done
rc=0; wait $run || rc=$?
tail -3 "$dir/run.log"
python3 - "$dir/server.jsonl" "$start" "$conc" "$lo" "$hi" "$secs" "$rpm" "$peak_rss" "$peak_threads" "$peak_sockets" "$rc" <<'PY'
import json, sys
log, start, conc, lo, hi, secs, rpm, rss, threads, sockets, rc = sys.argv[1:]
start, conc, lo, hi, secs, rpm = float(start), int(conc), float(lo), float(hi), float(secs), float(rpm)
rows = [json.loads(l) for l in open(log)] if open(log).read().strip() else []
end = max([r["end"] for r in rows], default=start)
w0 = start + hi  # every lane has had a reply by then
w1 = min(end, start + secs)  # the time budget's end: after it nothing new is asked, the last replies drain
done = [r for r in rows if w0 <= r["end"] <= w1]
window = max(w1 - w0, 1e-9)
rate = len(done) / window * 60
ideal = conc / ((lo + hi) / 2) * 60
if rpm > 0: ideal = min(ideal, rpm)
events = sorted([(r["start"], 1) for r in rows] + [(r["end"], -1) for r in rows])
cur = peak = 0
for _, d in events:
    cur += d; peak = max(peak, cur)
print(f"requests answered:        {len(rows)} in {end - start:.0f} s (exit status {rc})")
print(f"requests in flight, peak: {peak} (concurrency {conc})")
print(f"proposals per minute:     {rate:.1f} in the steady window ({window:.0f} s: from {hi:.0f} s to the budget's end)")
print(f"rate allowed:             {ideal:.1f} per minute (concurrency / mean latency {(lo+hi)/2:.1f} s" + (f", rpm {rpm:.0f}" if rpm > 0 else "") + ")")
print(f"achieved / allowed:       {rate / ideal:.3f}")
print(f"search process: peak RSS {int(rss)/1024:.1f} MiB, peak threads {threads}, peak open sockets {sockets}")
PY
