#!/usr/bin/env bash
# Builds the fuzz targets (clang, libFuzzer + ASan + UBSan, into build-fuzz) and runs each for
# SECONDS (default 60), one after the other, or all at once with ZG_FUZZ_PARALLEL=1.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Each target's corpus grows in build-fuzz/corpus/TARGET (seeded from fuzz/seeds/TARGET); a crash
# leaves its input in build-fuzz/crashes/TARGET/ and makes the script exit 1. Per target it prints
# the executions, the CPU and wall time and the crashes (docs/reliability.md says what to do with
# a crash: fix it, and commit the input under fuzz/regressions/TARGET/).
# ZG_FUZZ_NICE=19 runs the fuzzers under nice; ZG_JOBS sets the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(onnx_model training_spec layout_manifest safetensors checkpoint_manifest ort_checkpoint)
fi
build=${ZG_FUZZ_BUILD_DIR:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$build" -DZG_FUZZ=ON -DZG_BUILD_TESTS=OFF -DZG_BUILD_BENCH=OFF \
  -DZG_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target zg_fuzzers -j "${ZG_JOBS:-$(nproc)}"

# Runs target $1 for $seconds; its log goes to $build/logs/$1.log.
run_target() {
  local target=$1 dict=()
  mkdir -p "$build/corpus/$target" "$build/crashes/$target" "$build/logs"
  case $target in
  layout_manifest | checkpoint_manifest | training_spec | safetensors) dict=(-dict=fuzz/dicts/json.dict) ;;
  esac
  # -timeout: an input slower than 30 s is a finding too (a loader must not hang).
  nice -n "${ZG_FUZZ_NICE:-0}" "$build/fuzz/fuzz-$target" "$build/corpus/$target" "fuzz/seeds/$target" \
    "${dict[@]}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$target/" >"$build/logs/$target.log" 2>&1
}

# Prints target $1's numbers from its log and its usage file ($2: exit code).
report() {
  local target=$1 code=$2 log=$build/logs/$1.log execs crashes
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  crashes=$(find "$build/crashes/$target" -type f | wc -l)
  printf '%-20s exit %-3s executions %-10s crashes %-3s corpus %s files, %s\n' "$target" "$code" \
    "${execs:-?}" "$crashes" "$(find "$build/corpus/$target" -type f | wc -l)" \
    "$(cat "$build/logs/$target.time" 2>/dev/null)"
}

mkdir -p "$build/logs"
declare -A codes
if [ "${ZG_FUZZ_PARALLEL:-0}" = 1 ]; then
  declare -A pids
  for t in "${targets[@]}"; do
    ( TIMEFORMAT="wall %Rs, CPU %Us user + %Ss sys"; { time run_target "$t"; } 2>"$build/logs/$t.time" ) &
    pids[$t]=$!
  done
  for t in "${targets[@]}"; do
    set +e; wait "${pids[$t]}"; codes[$t]=$?; set -e
  done
else
  for t in "${targets[@]}"; do
    set +e
    ( TIMEFORMAT="wall %Rs, CPU %Us user + %Ss sys"; { time run_target "$t"; } 2>"$build/logs/$t.time" )
    codes[$t]=$?
    set -e
  done
fi
failed=0
for t in "${targets[@]}"; do
  report "$t" "${codes[$t]}"
  [ "${codes[$t]}" -eq 0 ] || failed=1
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a target failed; its log: $build/logs/TARGET.log, its input: $build/crashes/TARGET/"
  exit 1
fi
