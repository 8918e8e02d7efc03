#!/usr/bin/env bash
# The main job on the demo model: set up, build, generate the demo graph and its data, rewrite it
# for 2 ranks with overlap, and train it for 10 steps on 2 ranks under mpirun. Checkpointing and
# conversion come with the checkpoint issue and are listed, not faked.
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
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)

step "train: 10 steps on 2 ranks (mpirun -np 2), trace in out/trace.json"
mpirun -np 2 "${mpi_flags[@]}" "$build/apps/graph-exec" out/mlp_demo.2ranks.onnx \
  --data out/models/mlp_demo_data.safetensors --steps 10 --lr 0.01 \
  --loss-log out/loss.log --trace out/trace.json

cat <<'NOT_YET'

== not done yet: checkpoints come with the checkpoint issue
  - save while training:  graph-exec ... --save out/ckpt --save-every 5
  - convert:              checkpoint-convert out/ckpt out/ckpt.balanced --to balanced --nranks 1
  (both exit with 3 and say so today)

demo: rewrite and 2-rank training done; losses in out/loss.log, trace in out/trace.json
(open it in Perfetto: one process per rank, one lane per stream).
NOT_YET
