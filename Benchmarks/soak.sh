#!/usr/bin/env bash
# Soak benchmark: COUNT small PNGs (64x64, default 10,000) dropped at once into the watched folder of a running
# `chute run` daemon, converted to JPEG at quality 85; it waits until every file's job has finished and reports what
# the load did to the supervisor (the `chute run` process, not its workers): its resident memory before and after
# and its peak (VmHWM), its open file descriptors before the drop and once the work is done and their count has
# settled, and its worker processes. With ROUNDS (default 1) it drops COUNT new files that many times into the same
# daemon, one round after the other, to tell growth per file from a one-off high-water mark. For context,
# `convert-im6.q16` does the same conversion on SAMPLE of the files (default 500) one at a time in the same run,
# extrapolated to all of them. With API_CLIENTS (default 0), that many clients drive the daemon's status API during
# the rounds (Benchmarks/api-load.py, each polling every API_PAUSE seconds, default 1), and their request latencies
# are printed; Benchmarks/api-soak.sh compares the throughput with and without them.
#
#   bash Benchmarks/soak.sh [COUNT] [SAMPLE] [ROUNDS] [API_CLIENTS] [API_PAUSE]
#
# Not a test: nothing here asserts on time. It counts files missed, failed or converted twice, and gives up waiting
# when no job has finished for 120 s (or after CHUTE_SOAK_TIMEOUT seconds per round, default 3600).
# CHUTE=path/to/chute times that build instead of making one (Benchmarks/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10000}"
sample="${2:-500}"
rounds="${3:-1}"
api_clients="${4:-0}"
api_pause="${5:-1}"
[ "$sample" -le "$count" ] || sample="$count"
source scripts/install-deps.sh
source Benchmarks/common.sh

chute="$(release_binary chute)"
work="$(mktemp -d /tmp/chute-soak-XXXXXX)"
daemon=""
load=""
trap '[ -n "$load" ] && kill "$load" 2>/dev/null; [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT
status_kb() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }  # $1 = pid, $2 = VmRSS, VmHWM, ...
fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# The kinds of a process's descriptors with their counts: pipe, socket, anon_inode:[pidfd], or the file (paths in
# the work folder shown relative to it).
fd_kinds() {
    find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' 2>/dev/null |
        sed -E -e 's/^(pipe|socket):\[[0-9]+\]$/\1/' -e "s|^$work/||" | sort | uniq -c |
        awk '{ printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1 } END { print "" }'
}
children() { (pgrep -P "$1" || true) | wc -l; }
finished_jobs() { grep -c -E 'Job (completed|failed)' "$work/log" || true; }

# Polls the daemon's descriptor count every 0.5 s until it has been the same for 3 s, or for 60 s at most; prints it.
settled_fds() {
    local previous=-1 same=0 current deadline=$((SECONDS + 60))
    while [ "$same" -lt 6 ] && [ "$SECONDS" -lt "$deadline" ]; do
        current=$(fds "$daemon")
        if [ "$current" -eq "$previous" ]; then same=$((same + 1)); else same=0; fi
        previous=$current
        sleep 0.5
    done
    echo "$previous"
}

# Copies the 10 generated PNGs under COUNT names into a staging folder beside the inbox (same file system, so the
# drop is a rename). $1 = round.
stage() {
    mkdir -p "$work/staging"
    for ((i = 0; i < count; i++)); do
        printf '%s/bases/base%d.png\0%s/staging/r%d-%05d.png\0' "$work" "$((i % 10))" "$work" "$1" "$i"
    done | xargs -0 -n 2 -P 4 cp
}

mkdir -p "$work/inbox" "$work/bases"
for base in 0 1 2 3 4 5 6 7 8 9; do
    convert-im6.q16 -size 64x64 -seed "$base" plasma:fractal "$work/bases/base$base.png"
done
cat > "$work/rules.yaml" <<YAML
watch:
  - path: ./inbox
rules:
  - name: to-jpg
    match: "*.png"
    to: jpg
    quality: 0.85
    # The 10,000 files are copies of 10 pictures: convert each, rather than skip the copies of one already converted.
    onDuplicate: convert
    output: ./outbox
settings:
  quietPeriod: 100ms
YAML

"$chute" run --config "$work/rules.yaml" 2> "$work/log" >/dev/null &
daemon=$!
deadline=$((SECONDS + 60))
until grep -qs "Watcher ready" "$work/log"; do
    [ "$SECONDS" -lt "$deadline" ] && kill -0 "$daemon" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
    sleep 0.05
done
rss_before=$(status_kb "$daemon" VmRSS)
fds_before=$(fds "$daemon")
fd_kinds_before=$(fd_kinds "$daemon")
workers_before=$(children "$daemon")

wall=0
workers_peak=0
round_lines=()
for ((round = 1; round <= rounds; round++)); do
    echo "round $round: copying $count PNGs of 64x64 to $work/staging, then dropping them ..." >&2
    stage "$round"
    if [ "$api_clients" -gt 0 ] && [ -z "$load" ]; then
        python3 Benchmarks/api-load.py "$work/.chute/api.sock" "$work/api-stop" "$api_clients" "$api_pause" \
            > "$work/api.txt" &
        load=$!
    fi
    expected=$((round * count))
    start=$(now)
    find "$work/staging" -name '*.png' -exec mv -t "$work/inbox" {} +
    moved=$(now)
    deadline=$((SECONDS + ${CHUTE_SOAK_TIMEOUT:-3600}))
    done_jobs=$(finished_jobs)
    progress_at=$SECONDS
    while [ "$done_jobs" -lt "$expected" ]; do
        if ! kill -0 "$daemon" 2>/dev/null; then
            echo "the daemon exited; its log ends:" >&2
            tail -20 "$work/log" >&2
            exit 1
        fi
        if [ "$SECONDS" -ge "$deadline" ] || [ $((SECONDS - progress_at)) -ge 120 ]; then
            echo "gave up waiting: $done_jobs of $expected jobs done, none for $((SECONDS - progress_at)) s" >&2
            break
        fi
        workers=$(children "$daemon")
        [ "$workers" -gt "$workers_peak" ] && workers_peak=$workers
        sleep 0.2
        previous=$done_jobs
        done_jobs=$(finished_jobs)
        [ "$done_jobs" -gt "$previous" ] && progress_at=$SECONDS
    done
    end=$(now)
    round_wall=$(elapsed "$start" "$end")
    wall=$(calc "$wall + $round_wall")
    round_fds=$(settled_fds)
    round_lines+=("$(printf '    round %d: %8.2f s (mv %.2f s), %6.1f files/s; RSS %d KiB, VmHWM %d KiB, fds %d' \
        "$round" "$round_wall" "$(elapsed "$start" "$moved")" "$(calc "$count / $round_wall")" \
        "$(status_kb "$daemon" VmRSS)" "$(status_kb "$daemon" VmHWM)" "$round_fds")")
done

if [ -n "$load" ]; then
    touch "$work/api-stop"
    wait "$load"
    load=""
fi
fds_after=$(settled_fds)
fd_kinds_after=$(fd_kinds "$daemon")
rss_after=$(status_kb "$daemon" VmRSS)
hwm=$(status_kb "$daemon" VmHWM)
workers_after=$(children "$daemon")
read -r supervisor_user supervisor_sys supervisor_cpu < <(cpu_seconds "$daemon")
threads=$(status_kb "$daemon" Threads)
kill -TERM "$daemon"
wait "$daemon" || true
daemon=""

total=$((count * rounds))
sidecars=$(find "$work/outbox" -name '*.chute.json' | wc -l)
outputs=$(find "$work/outbox" -name '*.jpg' | wc -l)
duplicates=$(find "$work/outbox" -name '*-[0-9].jpg' | wc -l)
failed=$( (grep -l '"status" : "failed"' -r "$work/outbox" --include='*.chute.json' || true) | wc -l)
inputs=$(find "$work/inbox" -name '*.png' | wc -l)
overflows=$(grep -c 'queue overflow' "$work/log" || true)
problems=$(grep -c -E ' (warning|error|critical) chute:' "$work/log" || true)

echo "convert-im6.q16 on $sample of the files, one at a time ..." >&2
mkdir -p "$work/cli"
cli_failed=0
cli_start=$(now)
for ((i = 0; i < sample; i++)); do
    name=$(printf 'r1-%05d' "$i")
    convert-im6.q16 "$work/inbox/$name.png" -quality 85 "$work/cli/$name.jpg" || cli_failed=$((cli_failed + 1))
done
cli_end=$(now)
cli_wall=$(elapsed "$cli_start" "$cli_end")
cli_extrapolated=$(calc "$cli_wall * $total / $sample")

printf '\nsoak benchmark: %d x %d PNGs 64x64 -> JPEG q85, each round dropped at once, %d cores\n' \
    "$rounds" "$count" "$(nproc)"
printf '  files: inputs %d, sidecars %d, outputs %d, failed %d, duplicate outputs %d\n' \
    "$inputs" "$sidecars" "$outputs" "$failed" "$duplicates"
printf '  wall time         %8.2f s  (from each drop to its last job, summed over rounds)\n' "$wall"
printf '  throughput        %8.1f files/s\n' "$(calc "$total / $wall")"
[ "$rounds" -gt 1 ] && printf '%s\n' "${round_lines[@]}"
printf '  supervisor CPU    %8.2f s  (user %.2f s + sys %.2f s over its whole life; %.2f ms per file)\n' \
    "$supervisor_cpu" "$supervisor_user" "$supervisor_sys" "$(calc "$supervisor_cpu * 1000 / $total")"
printf '  supervisor threads at the end: %d\n' "$threads"
printf '  supervisor RSS    before %d KiB, after %d KiB (growth %d KiB), peak (VmHWM) %d KiB\n' \
    "$rss_before" "$rss_after" "$((rss_after - rss_before))" "$hwm"
printf '  supervisor fds    before %d, after %d (settled; growth %d)\n' \
    "$fds_before" "$fds_after" "$((fds_after - fds_before))"
printf '    before: %s\n    after:  %s\n' "$fd_kinds_before" "$fd_kinds_after"
printf '  worker processes  before %d, peak %d, after %d\n' "$workers_before" "$workers_peak" "$workers_after"
printf '  log: %d inotify queue overflows, %d warning/error lines\n' "$overflows" "$problems"
printf '  convert-im6.q16, sequential: %d files in %.2f s (%.1f ms per file, failed %d)\n' \
    "$sample" "$cli_wall" "$(calc "$cli_wall * 1000 / $sample")" "$cli_failed"
printf '  convert-im6.q16 extrapolated to %d files: %.1f s\n' "$total" "$cli_extrapolated"
printf '  speed-up chute vs convert:   %.2fx\n' "$(calc "$cli_extrapolated / $wall")"
if [ "$api_clients" -gt 0 ]; then cat "$work/api.txt"; fi
