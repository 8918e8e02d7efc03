#!/usr/bin/env bash
# Runs the graph-io and AdamW benchmarks of two builds side by side, alternating old and new in
# every round, and prints each figure's median over the rounds with the new/old ratio: how a
# change moved them, measured in one run on this (shared, noisy) machine.
#
# Usage: bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS] [NODES]
#   OLD_BUILD, NEW_BUILD  build folders holding bench/graph-io-bench and bench/adamw-bench
#   ROUNDS                alternating rounds (default 5); NODES graph size (default 100000)
set -euo pipefail

old=${1:?usage: bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS] [NODES]}
new=${2:?usage: bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS] [NODES]}
rounds=${3:-5}
nodes=${4:-100000}
for build in "$old" "$new"; do
  for program in graph-io-bench adamw-bench; do
    [ -x "$build/bench/$program" ] || { echo "error: no $build/bench/$program" >&2; exit 2; }
  done
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One round of one build: "name value" lines, milliseconds.
run_round() {
  local build=$1 out=$2
  "$build/bench/graph-io-bench" --nodes "$nodes" --reps 1 --comm-buffer-mb 256 --dir "$work" \
    >"$out.io" 2>&1
  "$build/bench/adamw-bench" --elements 4194304 --reps 3 >"$out.adamw" 2>&1
  python3 - "$out.io" "$out.adamw" <<'EOF'
import sys

def rows(path):
    """Markdown table rows of a benchmark's output, as dicts by header."""
    tables, header = [], None
    for line in open(path):
        cells = [c.strip().strip('*') for c in line.strip().strip('|').split('|')]
        if not line.startswith('|'):
            header = None
        elif header is None:
            header = cells
        elif not set(line) <= set('|-: \n'):
            tables.append(dict(zip(header, cells)))
    return tables

for row in rows(sys.argv[1]):
    for key in ('IR load', 'IR verify', 'IR save', 'IR load+save', 'sharding-stage1', 'overlap',
                'Verify', 'rewrite'):
        if key in row:
            print(f"graph-io {key} (ms)", row[key])
for row in rows(sys.argv[2]):
    if 'AdamW ms' in row:  # the table before SGD and Cast joined it
        print(f"adamw {row['dtype']} (ms)", row['AdamW ms'])
    elif 'kernel ms' in row:
        print(f"{row['kernel'].lower()} {row['dtype']} (ms)", row['kernel ms'])
EOF
}

for round in $(seq 1 "$rounds"); do
  for side in old new; do
    build=$old
    [ "$side" = new ] && build=$new
    run_round "$build" "$work/$side.$round" >"$work/$side.$round.txt"
  done
  echo "round $round/$rounds done" >&2
done

python3 - "$work" "$rounds" "$old" "$new" "$nodes" <<'EOF'
import statistics, sys
work, rounds, old, new, nodes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
values = {}
order = []
for side in ('old', 'new'):
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{side}.{r}.txt"):
            name, value = line.rsplit(' ', 1)
            if name not in order:
                order.append(name)
            values.setdefault((side, name), []).append(float(value))
print(f"Medians of {rounds} alternating rounds; graph of {nodes} nodes (`rewrite-graph --nranks 8 "
      f"--overlap`, one bucket); AdamW over 4194304 elements. old = `{old}`, new = `{new}`.\n")
print("| figure | old | new | new / old |")
print("|---|---:|---:|---:|")
for name in order:
    o = statistics.median(values[('old', name)])
    n = statistics.median(values[('new', name)])
    print(f"| {name} | {o:.1f} | {n:.1f} | {n / o:.2f} |")
EOF
