#!/usr/bin/env bash
# The engine's candidates/s at 10,000 in flight (`kevolve bench engine`, null backend, 100,000 candidates) with
# the dashboard served, alternately with no client and with 5 clients on it, ROUNDS times each:
#   events: 5 clients each on /api/events (one `searches --json` event per request, every 2 s: an open searches page)
#   search: 5 clients each fetch /api/search/bench (`tree --json`, every node) every 2 s (an open search page)
# Usage: tools/bench_dashboard_load.sh [KEVOLVE_BINARY] [ROUNDS] [MODES...]   (default: build/bin/kevolve 3 events search)
set -euo pipefail
kevolve=${1:-build/bin/kevolve}
rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(events search)
export KEVOLVE_DASHBOARD_TOKEN=${KEVOLVE_DASHBOARD_TOKEN:-bench-dashboard-token-0123456789}
auth="Authorization: Bearer $KEVOLVE_DASHBOARD_TOKEN"
work=$(mktemp -d /tmp/kevolve-dash-load-XXXXXX)
trap 'rm -rf "$work"' EXIT

one() {  # one measurement: $1 = none | events | search; prints "MODE candidates/s answers"
  local mode=$1 log="$work/bench.log" pids=() port="" n=0
  : > "$log"
  "$kevolve" bench engine --json --serve 127.0.0.1:0 > "$work/bench.json" 2> "$log" &
  local bench=$!
  while [ -z "$port" ] && kill -0 $bench 2>/dev/null; do
    port=$(grep -o 'dashboard on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    sleep 0.1
  done
  if [ -n "$port" ] && [ "$mode" != none ]; then
    for i in 1 2 3 4 5; do
      if [ "$mode" = events ]; then
        # as EventSource does: one event per request, the next request after the server's `retry` (2 s)
        ( while :; do curl -s -N -H "$auth" "http://127.0.0.1:$port/api/events" >> "$work/client$i" 2>/dev/null \
            || true; sleep 2; done ) &
      else
        ( while :; do curl -s -o /dev/null -w '%{http_code}\n' -H "$auth" "http://127.0.0.1:$port/api/search/bench" \
            >> "$work/client$i" 2>/dev/null || true; sleep 2; done ) &
      fi
      pids+=($!)
    done
  fi
  wait $bench
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$mode" = events ]; then n=$(cat "$work"/client* | grep -c '^event: searches' || true)
  elif [ "$mode" = search ]; then n=$(cat "$work"/client* | grep -c '^200' || true); fi
  rm -f "$work"/client*
  echo "$mode $(grep -o '"candidates_per_s":[0-9.]*' "$work/bench.json" | cut -d: -f2) $n"
}

for r in $(seq "$rounds"); do
  one none
  for m in "${modes[@]}"; do one "$m"; done
done
