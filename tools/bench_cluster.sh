#!/usr/bin/env bash
# The engine benchmark over the network: a `kevolve node` dispatching a null-operator search to remote
# null-backend evaluators (no evaluation time: what is measured is proposal, store, scheduling and the
# round trip over the cluster's authenticated links on loopback), and the time from `kill -9` of a busy evaluator to
# the node re-queueing its jobs (with null evaluations of 200 ms, so the victim is always mid-evaluation).
# Usage: tools/bench_cluster.sh [BUILD_BIN_DIR]   (default build/bin). Prints figures; writes nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
dir=$(mktemp -d /tmp/kevolve-bench-cluster-XXXXXX)
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$dir"' EXIT
# Each role's key (and, for builds from before the per-role keys, the one shared secret they read).
export KEVOLVE_EVALUATOR_KEY=bench-cluster-evaluator-0123456789 KEVOLVE_CONSOLE_KEY=bench-cluster-console-0123456789
export KEVOLVE_CLUSTER_SECRET=bench-cluster-secret-0123456789
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
config() {  # budget in_flight port
  cat > "$dir/node.toml" <<CFG
[search]
problem = "gelu"
id = "bench-$3"
backend = "null"
operator = "null"
max_in_flight = $2
build_workers = 1
[strategy]
name = "greedy"
[budget]
evaluations = $1
[store]
path = "$dir/store-$3"
checkpoint_seconds = 0
[cluster]
listen = "127.0.0.1:$3"
heartbeat = 0.5
CFG
}
wait_listen() { for _ in $(seq 100); do grep -q "listening on" "$1" && return; sleep 0.1; done; echo "node did not start" >&2; exit 1; }

echo "== dispatch rate: 1 node, 2 evaluators x 8 null devices, 20000 candidates, 256 in flight ($(date +%F), $(nproc) cores)"
p=$(port); config 20000 256 "$p"
"$bin/kevolve" node --config "$dir/node.toml" --out "$dir/out" > "$dir/node.log" 2>&1 & node=$!
wait_listen "$dir/node.log"
for i in 1 2; do "$bin/kevolve" evaluator --join 127.0.0.1:$p --backend null --devices 8 > "$dir/ev$i.log" 2>&1 & done
t0=$(date +%s.%N)
wait $node
t1=$(date +%s.%N)
grep -o "evaluated [0-9]* (correct [0-9]*, failed [0-9]*) | in flight [0-9]* | best [^|]*| [0-9.]*/s" "$dir/node.log" | tail -1
python3 -c "print(f'node wall time {float($t1)-float($t0):.2f} s from the first evaluator start: {20000/(float($t1)-float($t0)):.0f} candidates/s end to end')"
pkill -f "evaluator --join 127.0.0.1:$p" || true

echo "== re-queue after kill -9: 2 evaluators x 2 null devices of 200 ms, 5 kills"
for k in 1 2 3 4 5; do
  p=$(port); config 100000 16 "$p"
  "$bin/kevolve" node --config "$dir/node.toml" --out "$dir/out" > "$dir/node.log" 2>&1 & node=$!
  wait_listen "$dir/node.log"
  "$bin/kevolve" evaluator --join 127.0.0.1:$p --backend null --devices 2 --null-delay-ms 200 > "$dir/a.log" 2>&1 & a=$!
  "$bin/kevolve" evaluator --join 127.0.0.1:$p --backend null --devices 2 --null-delay-ms 200 > "$dir/b.log" 2>&1 & b=$!
  sleep 2
  t0=$(date +%s.%N); kill -9 $a
  until grep -q "re-queued" "$dir/node.log"; do sleep 0.002; done
  t1=$(date +%s.%N)
  python3 -c "print(f'kill {$k}: re-queued {1000*(float($t1)-float($t0)):.1f} ms after kill -9')"
  kill $node $b 2>/dev/null || true; wait $node $a 2>/dev/null || true
done
