#!/usr/bin/env bash
# The main job on the demo model, as far as it exists today: set up, build, generate the models and
# their data, rewrite the demo graph. The steps that come with later work are listed, not faked.
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

step "models: generating the demo graphs and their datasets into out/models/"
mkdir -p out
"$build/models/generate-models" --model small --out-dir out/models

# The committed demo graph; the one just generated is the same bytes (tests/models checks that).
model=models/mlp_demo.onnx
[ -f "$model" ] || model=out/models/mlp_demo.onnx

step "rewrite: $model -> out/mlp_demo.rewritten.onnx"
"$build/apps/rewrite-graph" "$model" -o out/mlp_demo.rewritten.onnx --report

cat <<'NOT_YET'

== not done yet: the rest of the job comes with later work
  - rewrite for 2 ranks with overlap:
      rewrite-graph models/mlp_demo.onnx -o out/mlp_demo.rewritten.onnx --nranks 2 --overlap
    (the sharding-stage1 and overlap passes are not wired into rewrite-graph yet: it exits with 3)
  - train on 2 ranks and checkpoint:
      mpirun -np 2 graph-exec out/mlp_demo.rewritten.onnx --data out/models/mlp_demo_data.safetensors \
        --steps 10 --save out/ckpt --save-every 5
    (the executor is not implemented yet: graph-exec exits with 3)
  - convert the checkpoint:
      checkpoint-convert out/ckpt out/ckpt.balanced --to balanced --nranks 1
    (checkpoint conversion is not implemented yet: checkpoint-convert exits with 3)

demo: done with what exists today (load, verify and save of the demo graph).
NOT_YET
