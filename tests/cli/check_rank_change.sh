#!/usr/bin/env bash
# A checkpoint saved on 1 rank, resumed on 2 by following what the errors say: the first run is
# refused naming the rows each rank must take; the graph made with that batch, rewritten for 2
# ranks, continues the run.
#
# Usage: check_rank_change.sh OUT_DIR GENERATE_MODELS REWRITE_GRAPH GRAPH_EXEC MPIEXEC CKPT DATA
# CKPT is a balanced checkpoint of mlp_demo (batch 4) after step 2, trained with the schedule below.
set -euo pipefail
out=$1 generate=$2 rewrite=$3 exec=$4 mpiexec=$5 ckpt=$6 data=$7
mpirun=("$mpiexec" -np 2 --allow-run-as-root --oversubscribe)
schedule=(--lr 0.01 --lr-schedule cosine --warmup-steps 1 --device cpu)
rm -rf "$out" && mkdir -p "$out/b4" "$out/fixed"

"$generate" --model mlp_demo --out-dir "$out/b4" >/dev/null
"$rewrite" "$out/b4/mlp_demo.onnx" -o "$out/b4/n2.onnx" --nranks 2
set +e
"${mpirun[@]}" "$exec" "$out/b4/n2.onnx" --data "$data" --steps 5 --load "$ckpt" "${schedule[@]}" \
  >"$out/refused.log" 2>&1
code=$?
set -e
cat "$out/refused.log"
[ "$code" -ne 0 ] || { echo "FAIL: the run with 2 x 4 rows was not refused"; exit 1; }
rows=$(sed -n 's/.*each rank must take \([0-9]*\) rows.*/\1/p' "$out/refused.log" | head -1)
[ -n "$rows" ] || { echo "FAIL: the error does not say how many rows each rank must take"; exit 1; }
grep -q -- "generate-models --batch $rows" "$out/refused.log" ||
  { echo "FAIL: the error does not give the generate-models setting"; exit 1; }

"$generate" --model mlp_demo --batch "$rows" --out-dir "$out/fixed" >/dev/null
"$rewrite" "$out/fixed/mlp_demo.onnx" -o "$out/fixed/n2.onnx" --nranks 2
"${mpirun[@]}" "$exec" "$out/fixed/n2.onnx" --data "$data" --steps 5 --load "$ckpt" \
  "${schedule[@]}" | tee "$out/continued.log"
grep -q "^resumed from .* at step 3$" "$out/continued.log" || { echo "FAIL: not resumed"; exit 1; }
grep -q "^step 4  loss" "$out/continued.log" || { echo "FAIL: step 4 did not run"; exit 1; }
echo "OK: resumed on 2 ranks of $rows rows"
