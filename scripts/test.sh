#!/usr/bin/env bash
# Runs the whole test suite: installs the dependencies if needed, builds, and runs every test with `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
swift build --build-tests
# One test at a time: the suite's C-library and child-process tests would otherwise hold Swift's cooperative threads
# (two on a 2-core machine) and starve the timing-sensitive watcher tests; see docs/decisions.md.
swift test --skip-build --no-parallel
