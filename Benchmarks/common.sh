# Sourced by the benchmark scripts: the binary to time, and the clock.
#
# `release_binary PRODUCT` prints the path of a release build of PRODUCT, building it first (for `chute`, with the
# worker executables it starts, which sit beside it). For `chute`, CHUTE=path/to/chute names an existing build to
# time instead (such as a release build made earlier, so that nothing is compiled while a benchmark runs). CHUTE_SCRATCH_PATH, when set, is passed to
# `swift build --scratch-path` (a checkout shared by several builds).
release_binary() {
    if [ "$1" = chute ] && [ -n "${CHUTE:-}" ]; then
        echo "$CHUTE"
        return
    fi
    local build=(swift build -c release)
    [ -n "${CHUTE_SCRATCH_PATH:-}" ] && build+=(--scratch-path "$CHUTE_SCRATCH_PATH")
    local product
    for product in "$1" $([ "$1" = chute ] && echo chute-image-worker chute-media-worker chute-pdf-worker \
        chute-document-worker); do
        "${build[@]}" --product "$product" >/dev/null
    done
    echo "$("${build[@]}" --show-bin-path)/$1"
}

now() { date +%s.%N; }

# `wait_for_lines LOG PATTERN COUNT PID` returns once LOG holds COUNT lines that match the extended regular expression
# PATTERN. It follows the log as it grows (`tail -f`, which inotify wakes) rather than polling it: a poll would take
# CPU from the daemon being timed and add up to one interval to its time. Fails when PID exits first, or when TIMEOUT
# seconds pass (a fifth argument; none by default).
wait_for_lines() {
    local seen
    seen=$(timeout "${5:-0}" grep -c -m "$3" -E "$2" < <(tail -n +1 --pid="$4" -f "$1")) || true
    [ "${seen:-0}" -ge "$3" ]
}
# `cpu_seconds PID`: the process's user and system CPU time and their sum, in seconds. /proc/PID/stat's second
# field, "(chute)", has no spaces.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print $14 / hz, $15 / hz, ($14 + $15) / hz }' "/proc/$1/stat"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
calc() { awk "BEGIN { print $1 }"; }
