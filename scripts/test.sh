#!/usr/bin/env bash
# Runs the whole test suite: installs the dependencies if needed, builds, and runs every test with `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
swift build --build-tests
swift test --skip-build
