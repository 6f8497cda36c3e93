#!/usr/bin/env bash
# Benchmark: agents sharing a PostgreSQL queue. COUNT small photos (default 1000 generated 96x64 PNGs) made JPEGs by
# `chute run` agents, each with one image lane, in four phases on the same files:
#   journal  one agent on the SQLite journal beside its rules (the single-machine default);
#   pg-1     one agent on a PostgreSQL store: every job offered, claimed under a lease, renewed and finished there;
#   pg-2     two agents on one PostgreSQL store, watching one shared folder;
#   pg-3     three agents, the same.
# Each phase starts anew (its own folders, and for PostgreSQL a new server from Debian's packages on loopback), drops
# the photos into the watched folder at once, and is timed until every job is recorded completed. For each it prints
# the wall time, jobs per second, the CPU-seconds per job of the agents (with their workers) and of the database
# server, and each agent's share; then the store's overhead per job (pg-1 against the journal). For comparison,
# `convert-im6.q16` does the same conversions one process at a time (what one lane does), in the same run.
#
#   bash Benchmarks/agents.sh [COUNT]
#
# CPU times come from /usr/bin/time around each agent and the server, and include their start and stop. The wall
# time is read by polling every 0.2 s. This machine has two cores: three agents of one lane each share them. Not a
# test: nothing here asserts on time. CHUTE=path/to/chute times that build instead of making one (Benchmarks/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-1000}"
source scripts/install-deps.sh
source Benchmarks/common.sh

chute="$(release_binary chute)"
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work="$(mktemp -d /tmp/chute-agents-bench-XXXXXX)"
chmod 755 "$work"
agents=()
server=""
trap 'for p in "${agents[@]}" $server; do pkill -9 -P "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
as_postgres() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }

echo "generating $count photos of 96x64 in $work/photos ..." >&2
mkdir -p "$work/photos"
for ((i = 0; i < count; i++)); do printf '%d\0' "$i"; done |
    xargs -0 -n 1 -P 2 sh -c 'convert-im6.q16 -size 96x64 -seed "$0" plasma:fractal "'"$work"'/photos/p$0.png"'

# `start_server NAME`: a new cluster in $work/NAME, trusted on loopback only, with a database `chute`; sets $port.
start_server() {
    local data="$work/$1"
    mkdir -p "$data" && chown 65534:65534 "$data" 2>/dev/null || true
    as_postgres "$pgbin/initdb" -D "$data/cluster" -U chute --auth=trust >/dev/null
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    /usr/bin/time -f "%U %S" -o "$work/$1.server.cpu" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$pgbin/postgres" -D "$data/cluster" -p "$port" \
        -c listen_addresses=127.0.0.1 -c unix_socket_directories="$data" 2> "$data/server.log" &
    server=$!
    until "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port"; do sleep 0.1; done
    "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U chute chute
}

# `phase NAME AGENTS STORE`: AGENTS agents on STORE (`sqlite` or `postgres`) convert every photo; prints one line.
phase() {
    local name=$1 n=$2 store=$3 shared="$work/$1" i
    mkdir -p "$shared/inbox" "$shared/outbox" "$shared/staging"
    cp "$work"/photos/*.png "$shared/staging/"
    [ "$store" = postgres ] && start_server "$name"
    agents=()
    for ((i = 1; i <= n; i++)); do
        mkdir -p "$shared/agent$i"
        {
            echo "watch:"
            echo "  - path: $shared/inbox"
            echo "rules:"
            echo "  - name: photos"
            echo "    match: \"*.png\""
            echo "    to: jpg"
            echo "    output: $shared/outbox"
            echo "settings:"
            echo "  quietPeriod: 100ms"
            echo "  workerIdle: 10m"
            echo "  concurrency: {image: 1}"
            if [ "$store" = postgres ]; then
                echo "  store: postgres://chute@127.0.0.1:$port/chute?sslmode=disable"
                echo "  agent: agent$i"
            fi
        } > "$shared/agent$i/rules.yaml"
        /usr/bin/time -f "%U %S" -o "$shared/agent$i/cpu" \
            "$chute" run --config "$shared/agent$i/rules.yaml" 2> "$shared/agent$i/log" >/dev/null &
        agents+=($!)
        until [ -e "$shared/agent$i/log" ]; do sleep 0.05; done
        wait_for_lines "$shared/agent$i/log" "Watcher ready" 1 "${agents[-1]}" 60
    done
    local start done=0 deadline=$((SECONDS + 1200))
    start=$(now)
    mv "$shared"/staging/*.png "$shared/inbox/"
    while [ "$done" -lt "$count" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "$name: gave up after $done of $count" >&2; exit 1; }
        sleep 0.2
        done=$(cat "$shared"/agent*/log | grep -c 'msg="Job completed"' || true)
    done
    local wall
    wall=$(elapsed "$start" "$(now)")
    # /usr/bin/time passes no signal on: each agent is stopped itself, gracefully.
    for p in "${agents[@]}"; do pkill -TERM -P "$p"; done
    for p in "${agents[@]}"; do wait "$p" || true; done
    agents=()
    local cpu=0 shares=""
    for ((i = 1; i <= n; i++)); do
        cpu=$(calc "$cpu + $(awk '{ print $1 + $2 }' "$shared/agent$i/cpu")")
        shares+=" agent$i=$(grep -c 'msg="Job completed"' "$shared/agent$i/log")"
    done
    local server_cpu=0
    if [ -n "$server" ]; then
        as_postgres "$pgbin/pg_ctl" stop -D "$work/$name/cluster" -m fast >/dev/null
        wait "$server" || true
        server=""
        server_cpu=$(awk '{ print $1 + $2 }' "$work/$name.server.cpu")
    fi
    local outputs
    outputs=$(find "$shared/outbox" -name '*.jpg' | wc -l)
    printf '%-8s %d agent(s): %d outputs in %.2f s, %.1f jobs/s; CPU-s per job: agents %.4f, database %.4f;%s\n' \
        "$name" "$n" "$outputs" "$wall" "$(calc "$count / $wall")" "$(calc "$cpu / $count")" \
        "$(calc "$server_cpu / $count")" "$shares"
    echo "$name $wall $cpu $server_cpu" >> "$work/results"
}

load_before=$(cut -d ' ' -f 1 /proc/loadavg)
phase journal 1 sqlite
phase pg-1 1 postgres
phase pg-2 2 postgres
phase pg-3 3 postgres

mkdir -p "$work/convert"
start=$(now)
for f in "$work"/photos/*.png; do convert-im6.q16 "$f" -quality 85 "$work/convert/$(basename "$f" .png).jpg"; done
convert_wall=$(elapsed "$start" "$(now)")
printf 'convert  one process at a time: %d outputs in %.2f s, %.1f jobs/s\n' \
    "$(find "$work/convert" -name '*.jpg' | wc -l)" "$convert_wall" "$(calc "$count / $convert_wall")"

read -r _ journal_wall journal_cpu _ < <(grep '^journal ' "$work/results")
read -r _ pg_wall pg_cpu pg_server < <(grep '^pg-1 ' "$work/results")
printf 'store overhead per job, pg-1 against the journal: wall %+.2f ms, agent CPU %+.2f ms, database CPU %.2f ms\n' \
    "$(calc "($pg_wall - $journal_wall) * 1000 / $count")" "$(calc "($pg_cpu - $journal_cpu) * 1000 / $count")" \
    "$(calc "$pg_server * 1000 / $count")"
for name in pg-2 pg-3; do
    read -r _ wall _ _ < <(grep "^$name " "$work/results")
    printf 'throughput %s against pg-1: %.2fx\n' "$name" "$(calc "$pg_wall / $wall")"
done
printf 'convert against the journal agent (its time / Chute'"'"'s): %.2fx\n' "$(calc "$convert_wall / $journal_wall")"
echo "load average: $load_before before, $(cut -d ' ' -f 1 /proc/loadavg) after"
