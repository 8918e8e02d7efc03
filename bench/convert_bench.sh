#!/usr/bin/env bash
# convert-bench: checkpoint-convert's throughput and peak memory on a large checkpoint, next to
# `cp -r` of the same files in the same run (issue 5; goal: >= 0.5x cp's throughput, peak RSS
# <= 256 MiB). Writes a synthetic unbalanced checkpoint for 4 ranks with make-big-checkpoint
# (2.25 GiB by default), then runs, alternating, REPS times each:
#   cp        cp -r IN OUT, then sync of the copied files (the converter fsyncs what it writes)
#   balanced  checkpoint-convert IN OUT --to balanced --nranks 2
#   consol.   checkpoint-convert IN OUT --to consolidated --with-states (every byte, one file)
# and prints a Markdown table: median seconds, GB/s (input tensor files / seconds), the median CPU
# seconds (user + system: what the run itself cost, less disturbed than wall time by other load)
# and the largest "Maximum resident set size" GNU time saw. Page caches are dropped before every
# run when this process may (root); otherwise the numbers are warm-cache and the table says so.
# Deletes everything it wrote.
#
#   bench/convert_bench.sh --build build-release [--reps 3] [--layers 24] [--work DIR]
set -euo pipefail

build="build-release"
reps=3
layers=24
work_parent=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --work) work_parent=$2; shift 2 ;;
    *) echo "convert-bench: unknown option '$1'" >&2; exit 2 ;;
  esac
done
convert=$build/apps/checkpoint-convert
make=$build/bench/make-big-checkpoint
for tool in "$convert" "$make" /usr/bin/time; do
  [ -x "$tool" ] || { echo "convert-bench: '$tool' is missing (build it first)" >&2; exit 2; }
done

work=$(mktemp -d "$work_parent/convert-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in

"$make" "$in" --nranks 4 --layers "$layers" --rows 4096 --cols 2048 --params-per-bucket 4 \
  >/dev/null
in_bytes=$(du -cb "$in"/*.safetensors | awk 'END { print $1 }')

cold=no
if { sync && echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then cold=yes; fi
drop_caches() {
  if [ $cold = yes ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
}

# run NAME COMMAND...: times COMMAND under GNU time into $work/NAME.{s,rss} (one line per run).
run() {
  local name=$1 start end
  shift
  drop_caches
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$work/$name.s"
  sed -n 's/^\tMaximum resident set size (kbytes): //p' "$work/time.txt" >>"$work/$name.rss"
  awk -F': ' '/^\t(User|System) time \(seconds\)/ { cpu += $2 } END { printf "%.3f\n", cpu }' \
    "$work/time.txt" >>"$work/$name.cpu"
  rm -rf "$work/out"
}
# shellcheck disable=SC2016  # $1 and $2 are the inner shell's arguments
copy=(bash -c 'cp -r "$1" "$2" && sync "$2"/*' copy)

for ((i = 0; i < reps; ++i)); do
  run cp "${copy[@]}" "$in" "$work/out"
  run balanced "$convert" "$in" "$work/out" --to balanced --nranks 2
  run consolidated "$convert" "$in" "$work/out" --to consolidated --with-states
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
max() { sort -g "$1" | tail -1; }
cp_s=$(median "$work/cp.s")

echo "Input: synthetic unbalanced checkpoint for 4 ranks, $layers fp32 weights of 4096 x 2048 with"
echo "AdamW's two states (bench/make_big_checkpoint.cc): 4 rank files, $in_bytes bytes."
if [ $cold = yes ]; then
  echo "Page cache dropped before every run (cold reads)."
else
  echo "**Warm cache**: this process may not drop the page cache, so the input is read from memory."
fi
echo "Median of $reps runs each, alternating; GB/s = input bytes / seconds (10^9 bytes)."
echo
echo "| run | median s | GB/s | / cp | CPU s (user + sys) | peak RSS MiB (max of runs) |"
echo "|---|---:|---:|---:|---:|---:|"
for name in cp balanced consolidated; do
  s=$(median "$work/$name.s")
  cpu=$(median "$work/$name.cpu")
  rss=$(max "$work/$name.rss")
  awk -v n="$name" -v s="$s" -v b="$in_bytes" -v c="$cp_s" -v u="$cpu" -v r="$rss" 'BEGIN {
    label = n == "cp" ? "`cp -r` + `sync` of the files" : \
      n == "balanced" ? "unbalanced 4 -> balanced 2" : "unbalanced 4 -> consolidated (with states)"
    printf "| %s | %.2f | %.2f | %.2f | %.2f | %.0f |\n", label, s, b / s / 1e9, c / s, u, r / 1024 }'
done
echo
echo "Goals (issue 5): converter / cp >= 0.5, converter peak RSS <= 256 MiB."
