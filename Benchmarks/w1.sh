#!/usr/bin/env bash
# Benchmark: workload W1 of ../shared/bench (200 photos, 10 HEIC stills, a 60 s 1080p clip and ten 5-minute WAVs,
# copied into the inbox at once) through the daemon and through the script users write by hand (inotifywait +
# convert/ffmpeg through `xargs -P 2`), one after the other, RUNS pairs (default 3), with the harness of
# ../shared/bench/measure.sh. Prints each run's line and a table of medians with Chute/script ratios: wall time, mean
# and p90 time to output, CPU-seconds of the process tree, peak RSS of the tree (sampled) and of its largest process.
#
#   bash Benchmarks/w1.sh [RUNS]
#
# The workload (651 MB, 2 to 4 minutes to make) is kept in W1_WORKLOAD (default /tmp/chute-w1-workload) and made only
# when it is not there (its HEIC stills differ from workload.md5 with this machine's libheif, so a marker file beside
# it says it is whole). CHUTE=path/to/chute times that build instead of making one (Benchmarks/common.sh).
# Not a test: nothing here asserts on time. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
bench="$(cd ../shared/bench && pwd)"
source scripts/install-deps.sh
source Benchmarks/common.sh
command -v inotifywait >/dev/null || { echo "w1.sh needs inotifywait (apt-get install inotify-tools)" >&2; exit 1; }

CHUTE="$(release_binary chute)"
export CHUTE

workload="${W1_WORKLOAD:-/tmp/chute-w1-workload}"
if [ ! -e "$workload.made" ]; then
    echo "making workload W1 in $workload ..." >&2
    rm -rf "$workload"
    bash "$bench/gen-workload.sh" "$workload" >&2
    touch "$workload.made"
fi

results="$(mktemp -d /tmp/chute-bench-w1-XXXXXX)"
trap 'rm -rf "$results"' EXIT
for run in $(seq 1 "$runs"); do
    (cd "$bench" && ./measure.sh -w "$workload" -n "chute-$run" -l "$results/chute-$run.log" \
        -r "grep -q 'Watcher ready' '$results/chute-$run.log'" -o "$results/chute-$run.json" 'exec ./chute-w1.sh')
    (cd "$bench" && ./measure.sh -w "$workload" -n "script-$run" -P -o "$results/script-$run.json" \
        'exec ./diy-baseline.sh -j 2 "$INBOX" "$OUTBOX"')
done

python3 - "$results" "$runs" <<'EOF'
import json, statistics, sys
folder, runs = sys.argv[1], int(sys.argv[2])
load = lambda name: [json.load(open(f"{folder}/{name}-{i}.json")) for i in range(1, runs + 1)]
chute, script = load("chute"), load("script")
rows = [("wall (s)", "wall_s"), ("mean time to output (s)", "mean_time_to_output_s"),
        ("p90 time to output (s)", "p90_time_to_output_s"), ("CPU of the tree (s)", "cpu_s_workload"),
        ("peak tree RSS, sampled (MiB)", "peak_tree_rss_sampled_mib"),
        ("peak RSS, largest process (MiB)", "peak_rss_largest_proc_mib")]
print(f"\nW1, {runs} pairs, medians; valid outputs: Chute {[r['ok'] for r in chute]}, script {[r['ok'] for r in script]} "
      f"of {chute[0]['inputs']}")
print(f"{'':34s}{'Chute':>10s}{'script':>10s}{'ratio':>8s}   Chute runs / script runs")
for label, key in rows:
    c, s = statistics.median(r[key] for r in chute), statistics.median(r[key] for r in script)
    print(f"{label:34s}{c:10.1f}{s:10.1f}{c / s:8.2f}   {[r[key] for r in chute]} / {[r[key] for r in script]}")
for category in ("photo", "heic", "video", "audio"):
    last = lambda rs: statistics.median(r["per_category"][category]["last_s"] for r in rs)
    print(f"{'last ' + category + ' out (s)':34s}{last(chute):10.1f}{last(script):10.1f}{last(chute) / last(script):8.2f}")
EOF
