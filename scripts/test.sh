#!/usr/bin/env bash
# Set up, configure, build and run every test. Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${ZG_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=${ZG_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
