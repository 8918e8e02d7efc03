#!/usr/bin/env bash
# The main job on the demo model: set up, build, generate the demo graph and its data, rewrite it
# for 2 ranks with overlap, train it for 10 steps on 2 ranks under mpirun with checkpoints, resume
# from the first checkpoint (the losses must repeat bit for bit), and convert the last checkpoint
# to balanced on 1 rank and to consolidated weights.
# Usage: scripts/demo.sh        (outputs go to out/)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

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
# The resumed losses must be the first run's, bit for bit (last column: the loss's bits).
if ! diff <(grep -v '^#' out/loss.log | awk '$1 >= 5 {print $1, $4}') \
          <(grep -v '^#' out/loss.resumed.log | awk '{print $1, $4}'); then
  echo "demo: the resumed losses differ from the first run's" >&2
  exit 1
fi
echo "resumed losses of steps 5-9 are bit-identical to the first run's"

step "convert: out/ckpt (latest, unbalanced on 2 ranks) -> balanced on 1 rank, and consolidated"
"$build/apps/checkpoint-convert" out/ckpt out/ckpt.balanced1 --to balanced --nranks 1
"$build/apps/checkpoint-convert" out/ckpt out/weights --to consolidated
ls -l out/weights

cat <<'DONE'

demo: done. Losses in out/loss.log (with their exact bits), a trace in out/trace.json (open it in
Perfetto: one process per rank, one lane per stream), checkpoints in out/ckpt, a balanced 1-rank
copy in out/ckpt.balanced1 and the trained weights in out/weights/model.safetensors.
DONE
