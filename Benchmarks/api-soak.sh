#!/usr/bin/env bash
# The soak (Benchmarks/soak.sh) without and with CLIENTS clients driving the status API (Benchmarks/api-load.py),
# PAIRS times, on the same build: prints each run's throughput, the medians, their ratio, and the API's latencies.
#
#   bash Benchmarks/api-soak.sh [COUNT] [CLIENTS] [PAIRS] [PAUSE]
#
# Defaults: 10,000 files, 50 clients each pausing PAUSE = 1 s between requests, 3 pairs. Pairs alternate which run
# goes first, so an even count of pairs puts as many runs with clients first as without. With PAUSE 0.1 the 45
# pollers ask for ~450 requests a second, more than two cores serve beside the soak: a saturation test.
# Not a test: nothing here asserts on time. Run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10000}"
clients="${2:-50}"
pairs="${3:-3}"
pause="${4:-1}"
source scripts/install-deps.sh
source Benchmarks/common.sh
CHUTE="$(release_binary chute)"
export CHUTE
out="$(mktemp -d /tmp/chute-api-soak-XXXXXX)"
trap 'rm -rf "$out"' EXIT

throughput() { awk '/^  throughput/ { print $2 }' "$1"; }
supervisor_cpu() { awk '/^  supervisor CPU/ { print $3 }' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for ((pair = 1; pair <= pairs; pair++)); do
    # Alternating which run of a pair goes first: each soak creates and deletes 20,000 files, and the file system
    # gets slower at it run after run (ext4's inode allocation skips the recently deleted ones), which would
    # otherwise count against the second run of every pair.
    order="0 $clients"
    [ $((pair % 2)) -eq 0 ] && order="$clients 0"
    for load in $order; do
        echo "pair $pair: soak of $count files with $load API clients ..." >&2
        bash Benchmarks/soak.sh "$count" 50 1 "$load" "$pause" > "$out/$pair-$load.txt"
        printf '  pair %d, %2d API clients: %8.1f files/s, supervisor CPU %6.2f s\n' "$pair" "$load" \
            "$(throughput "$out/$pair-$load.txt")" "$(supervisor_cpu "$out/$pair-$load.txt")"
    done
done
without=$(for f in "$out"/*-0.txt; do throughput "$f"; done | median)
with=$(for f in "$out"/*-"$clients".txt; do throughput "$f"; done | median)
printf 'soak throughput, medians of %d: without API clients %.1f files/s, with %d clients %.1f files/s: %.3f of it\n' \
    "$pairs" "$without" "$clients" "$with" "$(calc "$with / $without")"
for f in "$out"/*-"$clients".txt; do
    sed -n '/^api load/,$p' "$f"
done
