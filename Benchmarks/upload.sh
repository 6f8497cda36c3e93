#!/usr/bin/env bash
# Benchmark: the HTTP path against the watched folder. COUNT small photos (default 200 generated 800x600 JPEGs) made
# 300 px wide JPEGs by one running `chute run`: first dropped at once into its watched folder (timed until the last
# job's sidecar is written), then sent through `POST /api/convert` on its loopback TCP address with the bearer token
# by 1, 4 and 16 concurrent clients (Benchmarks/upload-load.py; each answer checked to be a JPEG 300 px wide). For
# each it prints requests/s, the p50 and p99 latency, and the overhead per job of the HTTP path: (the HTTP wall time -
# the folder's) / COUNT. For comparison, `convert-im6.q16` does the same resizes with 2 processes in parallel
# (`xargs -P 2`), in the same run, as users would on two cores.
#
#   bash Benchmarks/upload.sh [COUNT]
#
# One untimed photo warms each path first, and the workers are kept between phases (`workerIdle: 10m`), so each phase
# starts with them warm. The client runs on the same two cores as the daemon: its CPU time is printed. Not a test:
# nothing here asserts on time. Every wait is bounded (600 s for the folder, 600 s per concurrency).
# CHUTE=path/to/chute times that build instead of making one (Benchmarks/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-200}"
source scripts/install-deps.sh
source Benchmarks/common.sh

chute="$(release_binary chute)"
work="$(mktemp -d /tmp/chute-upload-XXXXXX)"
daemon=""
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT
supervisor_cpu() { cpu_seconds "$daemon" | awk '{ print $3 }'; }
spool_files() { find "$work/.chute/spool" -type f 2>/dev/null | wc -l; }

echo "generating $count photos of 800x600 in $work/photos ..." >&2
mkdir -p "$work/bases" "$work/photos" "$work/inbox" "$work/staging"
for base in 0 1 2 3 4 5 6 7 8 9; do
    convert-im6.q16 -size 800x600 -seed "$base" plasma:fractal -blur 0x1 -quality 90 "$work/bases/base$base.jpg"
done
# Each photo is a base rolled by an offset of its own, so that no two have the same bytes.
for ((i = 0; i < count; i++)); do
    printf '%s\0+%d+%d\0%s\0' "$work/bases/base$((i % 10)).jpg" $((i * 37 % 800)) $((i * 53 % 600)) \
        "$(printf '%s/photos/photo%04d.jpg' "$work" "$i")"
done | xargs -0 -n 3 -P 2 sh -c 'convert-im6.q16 "$0" -roll "$1" -quality 90 "$2"'
cp "$work"/photos/*.jpg "$work/staging/"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
chmod 600 "$work/token"
cat > "$work/rules.yaml" <<YAML
watch:
  - path: ./inbox
rules:
  - name: photos
    match: "*.jpg"
    to: jpg
    width: 300
    output: ./outbox
    upload: true
    # The same photos go through the folder, then three times through the API: convert each time, rather than link
    # the earlier output (an upload's output goes to the spool, elsewhere, so a copy would be linked, not converted).
    onDuplicate: convert
settings:
  quietPeriod: 100ms
  workerIdle: 10m
  # 16 clients are never refused with 429: this times the HTTP path, not its limit.
  maxUploads: 16
  api:
    listen: 127.0.0.1:$port
    tokenFile: ./token
YAML

# The 1-minute load average before and after: on a shared machine, what else ran beside the benchmark.
load_before=$(cut -d ' ' -f 1 /proc/loadavg)
"$chute" run --config "$work/rules.yaml" 2> "$work/log" >/dev/null &
daemon=$!
deadline=$((SECONDS + 60))
until grep -qs "Watcher ready" "$work/log" && grep -qs "Status API listening" "$work/log"; do
    [ "$SECONDS" -lt "$deadline" ] && kill -0 "$daemon" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
    sleep 0.05
done
finished() {  # $1 = jobs; fails, showing the log's end, when they have not all finished within 600 s
    wait_for_lines "$work/log" 'Job (completed|failed)' "$1" "$daemon" 600 || {
        echo "gave up waiting for $1 jobs; the log ends:" >&2
        tail -20 "$work/log" >&2
        exit 1
    }
}

echo "watched folder: $count photos dropped at once ..." >&2
cp "$work/bases/base0.jpg" "$work/inbox/warm-up.jpg"
finished 1
cpu_before=$(supervisor_cpu)
start=$(now)
find "$work/staging" -name '*.jpg' -exec mv -t "$work/inbox" {} +
finished $((count + 1))
end=$(now)
folder_wall=$(elapsed "$start" "$end")
folder_cpu=$(calc "$(supervisor_cpu) - $cpu_before")
sidecars=$(find "$work/outbox" -name 'photo*.chute.json' | wc -l)
folder_failed=$( (grep -l '"status" : "failed"' -r "$work/outbox" --include='photo*.chute.json' || true) | wc -l)

curl -sS -f --max-time 60 -H "Authorization: Bearer $(cat "$work/token")" --data-binary "@$work/bases/base0.jpg" \
    -o /dev/null "http://127.0.0.1:$port/api/convert?rule=photos&name=warm-up.jpg"
results=()
for clients in 1 4 16; do
    echo "POST /api/convert: $count photos from $clients clients ..." >&2
    cpu_before=$(supervisor_cpu)
    read -r wall ok errors refused p50 p99 max client_cpu < <(python3 Benchmarks/upload-load.py "$port" \
        "$work/token" photos 300 "$clients" "$work"/photos/*.jpg)
    http_cpu=$(calc "$(supervisor_cpu) - $cpu_before")
    results+=("$clients $wall $ok $errors $refused $p50 $p99 $max $client_cpu $http_cpu")
done
# An answered upload is removed once sent: give the last ones a moment.
deadline=$((SECONDS + 10))
while [ "$(spool_files)" -gt 0 ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
spool_left=$(spool_files)
problems=$(grep -c -E 'level=(warning|error|critical)' "$work/log" || true)
kill -TERM "$daemon"
wait "$daemon" || true
daemon=""

echo "convert-im6.q16, 2 at a time (xargs -P 2) ..." >&2
mkdir -p "$work/cli"
start=$(now)
find "$work/photos" -name '*.jpg' -printf '%f\0' |
    xargs -0 -P 2 -I '{}' convert-im6.q16 "$work/photos/{}" -resize 300x -quality 85 "$work/cli/{}"
end=$(now)
cli_wall=$(elapsed "$start" "$end")
cli_outputs=$(find "$work/cli" -name '*.jpg' | wc -l)
load_after=$(cut -d ' ' -f 1 /proc/loadavg)

printf '\nupload benchmark: %d photos 800x600 JPEG -> JPEG 300 px wide, q85, one daemon, %d cores\n' \
    "$count" "$(nproc)"
printf '  load average before %s, after %s\n' "$load_before" "$load_after"
printf '  watched folder, dropped at once  %8.2f s  %6.1f jobs/s   sidecars %d, failed %d; supervisor %.2f ms/job\n' \
    "$folder_wall" "$(calc "$count / $folder_wall")" "$sidecars" "$folder_failed" \
    "$(calc "$folder_cpu * 1000 / $count")"
printf '  convert-im6.q16, xargs -P 2      %8.2f s  %6.1f files/s  outputs %d\n' \
    "$cli_wall" "$(calc "$count / $cli_wall")" "$cli_outputs"
printf '  folder / convert wall time: %.2f\n' "$(calc "$folder_wall / $cli_wall")"
printf '  POST /api/convert; overhead per job = (HTTP wall - folder wall) / %d; CPU of the supervisor per job and\n' \
    "$count"
printf '  of the client in all\n'
printf '  %7s %8s %7s %7s %7s %7s %4s %6s %4s %11s %7s %8s %10s %8s\n' clients 'wall s' 'req/s' 'p50 ms' 'p99 ms' \
    'max ms' ok errors 429s 'overhead ms' '/folder' '/convert' 'sup ms/job' 'client s'
for result in "${results[@]}"; do
    read -r clients wall ok errors refused p50 p99 max client_cpu http_cpu <<< "$result"
    printf '  %7d %8.2f %7.1f %7.1f %7.1f %7.1f %4d %6d %4d %11.1f %7.2f %8.2f %10.2f %8.2f\n' \
        "$clients" "$wall" "$(calc "$ok / $wall")" "$p50" "$p99" "$max" "$ok" "$errors" "$refused" \
        "$(calc "($wall - $folder_wall) * 1000 / $count")" "$(calc "$wall / $folder_wall")" \
        "$(calc "$wall / $cli_wall")" "$(calc "$http_cpu * 1000 / $count")" "$client_cpu"
done
printf '  spool files left after the answers: %d; log warning/error lines: %d\n' "$spool_left" "$problems"
