#!/usr/bin/env bash
# Benchmark: 200 generated 1.5 MP JPEGs dropped into a watched folder at once and converted to WebP at quality 85 by
# the Chute daemon, against `convert-im6.q16` doing the same conversions one file at a time, in the same run.
# It also runs the daemon with a fresh worker process per job (workerJobs: 1) to price the worker model. The daemon
# runs with its default settings (the quiet period included): the wall time is from the move into the inbox to the
# last job's log line.
#
#   bash Benchmarks/image-webp.sh [COUNT]
#
# Prints wall times and ratios. Not a test: nothing here asserts on time. CHUTE=path/to/chute times
# that build instead of making one (Benchmarks/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-200}"
source scripts/install-deps.sh
source Benchmarks/common.sh

chute="$(release_binary chute)"
work="$(mktemp -d /tmp/chute-bench-XXXXXX)"
daemon=""
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT

echo "generating $count JPEGs of 1500x1000 in $work/source ..." >&2
mkdir -p "$work/source"
for base in 0 1 2 3 4 5 6 7 8 9; do
    convert-im6.q16 -size 1500x1000 -seed "$base" plasma:fractal -blur 0x1 -quality 92 "$work/base$base.jpg"
done
for ((i = 0; i < count; i++)); do
    convert-im6.q16 "$work/base$((i % 10)).jpg" -roll "+$((i * 37))+$((i * 23))" -quality 92 \
        "$(printf '%s/source/photo%04d.jpg' "$work" "$i")"
done

run_daemon() {  # $1 = workerJobs; sets wall, failed, outputs
    local dir="$work/daemon-$1"
    mkdir -p "$dir/inbox" "$dir/staging"
    cp "$work"/source/*.jpg "$dir/staging/"
    cat > "$dir/rules.yaml" <<YAML
watch:
  - path: ./inbox
rules:
  - name: to-webp
    match: "*.jpg"
    to: webp
    quality: 0.85
    output: ./outbox
settings:
  workerJobs: $1
YAML
    "$chute" run --config "$dir/rules.yaml" 2> "$dir/log" &
    daemon=$!
    until grep -q "Watcher ready" "$dir/log"; do sleep 0.05; done
    local start end
    start=$(now)
    mv "$dir"/staging/*.jpg "$dir/inbox/"
    # The daemon's "Job completed/failed" log lines, followed as they come: cheaper than listing the outbox.
    wait_for_lines "$dir/log" 'Job (completed|failed)' "$count" "$daemon"
    end=$(now)
    kill -TERM "$daemon"
    wait "$daemon" || true
    daemon=""
    wall=$(elapsed "$start" "$end")
    failed=$( (grep -l '"status" : "failed"' "$dir"/outbox/*.chute.json || true) | wc -l)
    outputs=$(find "$dir/outbox" -name '*.webp' | wc -l)
}

echo "chute daemon, reused worker pool ..." >&2
run_daemon 200
pool_wall=$wall pool_failed=$failed pool_outputs=$outputs
echo "chute daemon, one worker process per job ..." >&2
run_daemon 1
fresh_wall=$wall fresh_failed=$failed fresh_outputs=$outputs

echo "convert-im6.q16, one file at a time ..." >&2
mkdir -p "$work/cli"
cli_failed=0
start=$(now)
for file in "$work"/source/*.jpg; do
    name="$(basename "$file" .jpg)"
    convert-im6.q16 "$file" -quality 85 "$work/cli/$name.webp" || cli_failed=$((cli_failed + 1))
done
end=$(now)
cli_wall=$(elapsed "$start" "$end")

sample="$(find "$work/daemon-200/outbox" -name '*.webp' | sort | sed -n 1p)"
cores=$(nproc)
printf '\nimage benchmark: %d JPEGs 1500x1000 -> WebP q85, %d cores\n' "$count" "$cores"
printf '  chute (worker pool)          %8.2f s  outputs %d, failed %d\n' "$pool_wall" "$pool_outputs" "$pool_failed"
printf '  chute (worker per job)       %8.2f s  outputs %d, failed %d\n' "$fresh_wall" "$fresh_outputs" "$fresh_failed"
printf '  convert-im6.q16, sequential  %8.2f s  outputs %d, failed %d\n' "$cli_wall" \
    "$(find "$work/cli" -name '*.webp' | wc -l)" "$cli_failed"
printf '  chute pool / convert:               %.2f of its wall time\n' "$(calc "$pool_wall / $cli_wall")"
printf '  speed-up chute pool vs convert:     %.2fx\n' "$(calc "$cli_wall / $pool_wall")"
printf '  speed-up chute per-job vs convert:  %.2fx\n' "$(calc "$cli_wall / $fresh_wall")"
printf '  per-job worker cost: %.1f ms per file\n' "$(calc "($fresh_wall - $pool_wall) * 1000 * $cores / $count")"
printf '  sample output: %s\n' "$(identify-im6.q16 -format '%m %wx%h' "$sample")"
printf '  total output bytes: chute %d, convert %d\n' "$(cat "$work"/daemon-200/outbox/*.webp | wc -c)" \
    "$(cat "$work"/cli/*.webp | wc -c)"
