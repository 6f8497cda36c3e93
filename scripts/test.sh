#!/usr/bin/env bash
# Runs the whole test suite: installs the dependencies if needed, builds, and runs every test suite, each in a test
# process of its own, three at a time (CHUTE_TEST_JOBS).
#
# Within one process the tests run one at a time (--no-parallel): the C-library and child-process tests would
# otherwise hold Swift's cooperative threads (two on a 2-core machine) and starve the timing-sensitive watcher tests
# (docs/decisions.md, "Tests run one at a time within a process"). Separate processes have a pool each, and most of a suite's time is spent
# waiting for daemons, workers and files, so three suites at once use the cores that one leaves idle.
#
#   bash scripts/test.sh              build, then run every suite
#   bash scripts/test.sh --suite ID   run one suite (Module.Suite) of the built tests; what the line above runs
set -euo pipefail
cd "$(dirname "$0")/.."

tests=.build/debug/chutePackageTests.xctest
export NO_COLOR=1

if [ "${1:-}" = "--suite" ]; then
    # One suite, its output printed whole once it ends, so that two suites' lines never interleave.
    suite=$2
    log=$(mktemp)
    start=$(date +%s%N)
    status=0
    "$tests" --testing-library swift-testing --no-parallel --filter "^${suite//./\\.}/" >"$log" 2>&1 || status=$?
    tenths=$((($(date +%s%N) - start) / 100000000))
    count=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .*/\1/p' "$log" | tail -1)
    {
        flock 9
        cat "$log"
        echo "=== $suite: exit $status after $((tenths / 10)).$((tenths % 10)) s"
        printf '%s\t%d\t%d.%d\t%d\n' "$suite" "$status" $((tenths / 10)) $((tenths % 10)) "${count:-0}" >>"$CHUTE_TEST_RESULTS"
    } 9>>"$CHUTE_TEST_RESULTS.lock"
    rm -f "$log"
    exit "$status"
fi

source scripts/install-deps.sh
swift build --build-tests

# The longest suites go first, so that the two workers end at about the same time; every other suite follows in
# name order. A suite named here that no longer exists is not looked for: the list comes from the tests themselves.
longest=(
    ChuteEndToEndTests.UploadEndToEndTests ChuteEndToEndTests.ImageOperationsEndToEndTests
    ChuteEndToEndTests.DebianPackageEndToEndTests ChuteEndToEndTests.MediaMatrixEndToEndTests
    ChuteEndToEndTests.MediaFramesEndToEndTests ChuteFFmpegTests.CorpusTests ChuteEndToEndTests.CrashEndToEndTests
    ChuteEndToEndTests.MediaSoundEndToEndTests ChuteEndToEndTests.SchedulerEndToEndTests
    ChuteEndToEndTests.DiskFullEndToEndTests ChuteEndToEndTests.TilesEndToEndTests
    ChuteEndToEndTests.FailureEndToEndTests ChuteEndToEndTests.FragmentEndToEndTests
    ChuteEndToEndTests.AgentsEndToEndTests
)
suites=$("$tests" --testing-library swift-testing --list-tests | sed 's|/.*||' | sort -u)
order=$(
    for suite in "${longest[@]}"; do grep -Fx "$suite" <<<"$suites" || true; done
    grep -Fxv -f <(printf '%s\n' "${longest[@]}") <<<"$suites"
)

jobs=${CHUTE_TEST_JOBS:-3}
results=$(mktemp -d)/results.tsv
: >"$results"
start=$(date +%s)
status=0
CHUTE_TEST_RESULTS=$results xargs -P "$jobs" -n 1 bash "$0" --suite <<<"$order" || status=$?

ran=$(wc -l <"$results")
failed=$(awk -F '\t' '$2 != 0 { print $1 }' "$results")
total=$(awk -F '\t' '{ n += $4 } END { print n }' "$results")
echo "=== $total tests in $ran suites in $(($(date +%s) - start)) s, $jobs suites at a time; the longest:"
# awk reads to the end: `head` would leave sort writing into a closed pipe, which pipefail makes the run's status
# (141) once the results outgrow sort's first write.
sort -t $'\t' -k3 -rn "$results" | awk -F '\t' 'NR <= 5 { printf "===   %s %s s\n", $1, $3 }'
if [ "$ran" -ne "$(wc -l <<<"$order")" ] || [ -n "$failed" ] || [ "$status" -ne 0 ]; then
    echo "=== FAILED: ${failed:-a suite did not finish}"
    exit 1
fi
echo "=== every suite passed"
