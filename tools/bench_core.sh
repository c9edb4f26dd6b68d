#!/usr/bin/env bash
# Benchmarks every problem of problems/core: the naive and the fast candidate, each verified and timed
# side by side with the libtorch reference in one `kevolve eval` run. Prints a markdown table.
# Usage: tools/bench_core.sh [extra `kevolve eval` options, e.g. --threads 2 --min-time 1]
set -euo pipefail
cd "$(dirname "$0")/.."
kevolve=build/bin/kevolve
[ -x "$kevolve" ] || { echo "build first: tools/build.sh" >&2; exit 1; }
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); v=d[sys.argv[2]]; print(v if not isinstance(v,float) else ("%.4g" % v))' "$1" "$2"; }
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); cpu: $(lscpu | sed -n 's/^Model name: *//p'); cores: $(nproc); options: ${*:-(defaults)}"
echo
echo "| problem | threads | reference ms (p10–p90) | naive ms | naive speedup | fast ms (p10–p90) | fast speedup | fast/naive | fast GB/s |"
echo "|---|---|---|---|---|---|---|---|---|"
for dir in problems/core/*/; do
  name=$(basename "$dir")
  n=$("$kevolve" eval --json --problem "$name" --candidate "$dir/naive.cpp" "$@")
  f=$("$kevolve" eval --json --problem "$name" --candidate "$dir/fast.cpp" "$@")
  if [ "$(field "$n" status)" != ok ] || [ "$(field "$f" status)" != ok ]; then
    echo "| $name | not ok: naive $(field "$n" status), fast $(field "$f" status) — $(field "$f" message) |"
    continue
  fi
  ratio=$(python3 -c "print('%.2f' % ($(field "$n" candidate_ms)/$(field "$f" candidate_ms)))")
  echo "| $name | $(field "$f" candidate_threads) | $(field "$f" reference_ms) ($(field "$f" reference_p10_ms)–$(field "$f" reference_p90_ms)) | $(field "$n" candidate_ms) | $(field "$n" speedup)x | $(field "$f" candidate_ms) ($(field "$f" candidate_p10_ms)–$(field "$f" candidate_p90_ms)) | $(field "$f" speedup)x | ${ratio}x | $(field "$f" candidate_gbps) |"
done
