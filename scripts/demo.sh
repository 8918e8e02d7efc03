#!/usr/bin/env bash
# The main job, on two models. The demo MLP (a training graph): set up, build, generate the graph
# and its data, rewrite it for 2 ranks with overlap, train it for 10 steps on 2 ranks under mpirun
# with checkpoints, resume from the first checkpoint (the losses must repeat bit for bit), and
# convert the last checkpoint to balanced on 1 rank and to consolidated weights. Then a tiny GPT
# from its forward graph alone: rewrite-graph --train adds the loss, backward and AdamW, then the
# same road (100 steps, the loss falling from ln 64 = 4.16).
# Usage: scripts/demo.sh        (outputs go to out/)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

# same_losses FULL RESUMED FIRST: the resumed run's losses (from step FIRST) must be the full
# run's, bit for bit (last column of a loss log: the loss's bits).
same_losses() {
  if ! diff <(grep -v '^#' "$1" | awk -v first="$3" '$1 >= first {print $1, $4}') \
            <(grep -v '^#' "$2" | awk '{print $1, $4}'); then
    echo "demo: the resumed losses in $2 differ from the first run's in $1" >&2
    exit 1
  fi
  echo "resumed losses from step $3 on are bit-identical to the first run's"
}

step "setup: installing missing dependencies"
scripts/setup.sh

build=${ZG_BUILD_DIR:-build}
step "build: configuring and building in $build/"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${ZG_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target generate-models rewrite-graph graph-exec \
  checkpoint-convert

step "models: generating the demo graph and its dataset (100 samples) into out/models/"
mkdir -p out
"$build/models/generate-models" --model mlp_demo --out-dir out/models

step "rewrite: out/models/mlp_demo.onnx -> out/mlp_demo.2ranks.onnx (2 ranks, overlap)"
"$build/apps/rewrite-graph" out/models/mlp_demo.onnx -o out/mlp_demo.2ranks.onnx \
  --nranks 2 --overlap --layout-out out/mlp_demo.2ranks.layout.json --report
"$build/apps/rewrite-graph" --check out/mlp_demo.2ranks.onnx

# OpenMPI refuses root without --allow-run-as-root, and more ranks than cores without
# --oversubscribe; both are harmless otherwise.
mpi_flags=(--oversubscribe)
# Two ranks need two GPUs; ZG_DEVICE=cuda uses them.
device=${ZG_DEVICE:-cpu}
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)

step "train: 10 steps on 2 ranks (mpirun -np 2), a checkpoint every 5 steps, trace in out/trace.json"
rm -rf out/ckpt out/ckpt.balanced1 out/weights
mpirun -np 2 "${mpi_flags[@]}" "$build/apps/graph-exec" out/mlp_demo.2ranks.onnx \
  --data out/models/mlp_demo_data.safetensors --steps 10 --lr 0.01 \
  --loss-log out/loss.log --trace out/trace.json --save out/ckpt --save-every 5 --device "$device"

step "resume: steps 5-9 again from out/ckpt/step-000004"
mpirun -np 2 "${mpi_flags[@]}" "$build/apps/graph-exec" out/mlp_demo.2ranks.onnx \
  --data out/models/mlp_demo_data.safetensors --steps 10 --lr 0.01 \
  --load out/ckpt/step-000004 --loss-log out/loss.resumed.log --device "$device"
same_losses out/loss.log out/loss.resumed.log 5

step "convert: out/ckpt (latest, unbalanced on 2 ranks) -> balanced on 1 rank, and consolidated"
"$build/apps/checkpoint-convert" out/ckpt out/ckpt.balanced1 --to balanced --nranks 1
"$build/apps/checkpoint-convert" out/ckpt out/weights --to consolidated
ls -l out/weights

step "gpt: out/models/gpt_tiny.forward.onnx (a forward graph) -> out/gpt_tiny.train.onnx (--train)"
"$build/models/generate-models" --model gpt_tiny --out-dir out/models
"$build/apps/rewrite-graph" out/models/gpt_tiny.forward.onnx -o out/gpt_tiny.train.onnx \
  --train --loss cross-entropy --loss-on logits --label labels --report

step "gpt rewrite: out/gpt_tiny.train.onnx -> out/gpt_tiny.2ranks.onnx (2 ranks, overlap)"
"$build/apps/rewrite-graph" out/gpt_tiny.train.onnx -o out/gpt_tiny.2ranks.onnx \
  --nranks 2 --overlap --report

step "gpt train: 100 steps of 8 rows on 2 ranks, cosine schedule, a checkpoint every 50 steps"
rm -rf out/gpt.ckpt out/gpt.ckpt.balanced1 out/gpt.weights
gpt_run=("$build/apps/graph-exec" out/gpt_tiny.2ranks.onnx
  --data out/models/gpt_tiny_data.safetensors --steps 100 --batch 8 --lr 0.01
  --lr-schedule cosine --warmup-steps 10 --device "$device")
mpirun -np 2 "${mpi_flags[@]}" "${gpt_run[@]}" --loss-log out/gpt.loss.log --save out/gpt.ckpt \
  --save-every 50
grep -v '^#' out/gpt.loss.log | awk '
  NR == 1 {first = $2} NR > 90 {last += $2; n++}
  END {printf "gpt loss: %.3f at step 0, %.3f on average over the last %d steps\n", first, last / n, n}'

step "gpt resume: steps 50-99 again from out/gpt.ckpt/step-000049"
mpirun -np 2 "${mpi_flags[@]}" "${gpt_run[@]}" --load out/gpt.ckpt/step-000049 \
  --loss-log out/gpt.loss.resumed.log
same_losses out/gpt.loss.log out/gpt.loss.resumed.log 50

step "gpt convert: out/gpt.ckpt (latest) -> balanced on 1 rank, and consolidated"
"$build/apps/checkpoint-convert" out/gpt.ckpt out/gpt.ckpt.balanced1 --to balanced --nranks 1
"$build/apps/checkpoint-convert" out/gpt.ckpt out/gpt.weights --to consolidated
ls -l out/gpt.weights

cat <<'DONE'

demo: done. MLP: losses in out/loss.log (with their exact bits), a trace in out/trace.json (open it
in Perfetto: one process per rank, one lane per stream), checkpoints in out/ckpt, a balanced 1-rank
copy in out/ckpt.balanced1 and the trained weights in out/weights/model.safetensors. GPT: its
training graph in out/gpt_tiny.train.onnx, losses in out/gpt.loss.log, checkpoints in
out/gpt.ckpt, a balanced 1-rank copy in out/gpt.ckpt.balanced1 and the trained weights in
out/gpt.weights/model.safetensors.
DONE
