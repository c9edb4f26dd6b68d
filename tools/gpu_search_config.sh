#!/usr/bin/env bash
# Prints the config of one offline CUDA search as the GPU scripts run it (tools/gpu_check.sh,
# tools/gpu_template_points.sh): template operator, directed, greedy, 3 in flight, the best 2 re-timed, min_time 0.2 s.
# Usage: tools/gpu_search_config.sh PROBLEM ID BUDGET STORE CHECKPOINT_SECONDS
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 PROBLEM ID BUDGET STORE CHECKPOINT_SECONDS" >&2; exit 2; }
cat <<CFG
[search]
problem = "$1"
id = "$2"
backend = "cuda"
operator = "template"
directed = true
seed = 1
max_in_flight = 3
retime_top = 2

[strategy]
name = "greedy"
max_children = 4

[budget]
evaluations = $3
no_improvement = $3

[store]
path = "$4"
checkpoint_seconds = $5

[eval]
min_time = 0.2
arch = "sm_90"
CFG
