#!/usr/bin/env bash
# Makes seed corpora for the fuzz targets from models/, tests/data and what the programs write
# (rewritten graphs, layout manifests, checkpoints of each kind).
# Usage: fuzz/make_seeds.sh BUILD_DIR OUT_DIR [MAX_BYTES]
#   BUILD_DIR  a normal build (its apps/ run to write graphs and checkpoints)
#   OUT_DIR    gets one folder per target; files over MAX_BYTES (default: no limit) are left out,
#              which is how fuzz/seeds/ (committed, 10 KB at most each) was made.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) out=$2 max=${3:-0}
apps=$build/apps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{onnx_model,training_spec,layout_manifest,safetensors,checkpoint_manifest,ort_checkpoint}

# Copies $1 to target $2 as $3 unless larger than MAX_BYTES.
seed() {
  local size
  size=$(stat -c %s "$1")
  if [ "$max" -gt 0 ] && [ "$size" -gt "$max" ]; then return; fi
  cp "$1" "$out/$2/$3"
}

# Graphs: the demos, ONNX Runtime's reference models, and the MLP rewritten for 2 ranks.
"$apps/rewrite-graph" "$src/models/mlp_demo.onnx" -o "$work/mlp.2.onnx" --nranks 2 \
  --layout-out "$work/layout.seed.json" >/dev/null
"$apps/rewrite-graph" "$src/models/mlp_demo.onnx" -o "$work/mlp.2c.onnx" --nranks 2 --align compact \
  --layout-out "$work/layout.compact.json" >/dev/null
"$apps/rewrite-graph" "$src/models/mlp_demo_sgd.onnx" -o "$work/mlp_sgd.3.onnx" --nranks 3 \
  --layout-out "$work/layout.sgd3.json" >/dev/null
for f in "$src"/models/*.onnx "$work"/*.onnx; do seed "$f" onnx_model "$(basename "$f")"; done
for f in "$src"/tests/data/ort_reference/*/artifacts/*.onnx; do
  seed "$f" onnx_model "ort_$(basename "$(dirname "$(dirname "$f")")")_$(basename "$f")"
done
for f in "$src"/tests/data/ort_reference/*/forward.onnx; do
  seed "$f" onnx_model "ort_$(basename "$(dirname "$f")")_forward.onnx"
done
for f in "$work"/layout.*.json; do seed "$f" layout_manifest "$(basename "$f")"; done

# Training metadata: each graph's `zerograph.*` entries as the target's `key=value` lines.
for f in "$src/models/mlp_demo.onnx" "$src/models/mlp_demo_sgd.onnx" "$work/mlp.2.onnx"; do
  /usr/bin/python3 -c '
import sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
print("\n".join(p.key + "=" + p.value for p in m.metadata_props if p.key.startswith("zerograph.")))
' "$f" >"$out/training_spec/$(basename "$f" .onnx).txt"
done

# Checkpoints: unbalanced and balanced on 2 ranks, consolidated; their manifests and files.
mpirun=(mpirun -np 2 --allow-run-as-root --oversubscribe)
"${mpirun[@]}" "$apps/graph-exec" "$work/mlp.2.onnx" --data "$src/models/mlp_demo_data.safetensors" \
  --steps 2 --lr 0.001 --save "$work/ckpt" >/dev/null
step=$(cat "$work/ckpt/latest")
"$apps/checkpoint-convert" "$work/ckpt/$step" "$work/balanced" --to balanced --nranks 3 >/dev/null
"$apps/checkpoint-convert" "$work/ckpt/$step" "$work/consolidated" --to consolidated >/dev/null
seed "$work/ckpt/$step/manifest.json" checkpoint_manifest unbalanced.json
seed "$work/balanced/manifest.json" checkpoint_manifest balanced.json
[ -f "$work/consolidated/manifest.json" ] &&
  seed "$work/consolidated/manifest.json" checkpoint_manifest consolidated.json
for f in "$work/ckpt/$step"/*.safetensors "$work/consolidated"/*.safetensors; do
  seed "$f" safetensors "$(basename "$(dirname "$f")")_$(basename "$f")"
done
for f in "$src"/models/*.safetensors "$src"/tests/data/ort_reference/*/*.safetensors; do
  seed "$f" safetensors "$(basename "$(dirname "$f")")_$(basename "$f")"
done

# ONNX Runtime's checkpoints.
for f in "$src"/tests/data/ort_reference/*/artifacts/checkpoint; do
  seed "$f" ort_checkpoint "$(basename "$(dirname "$(dirname "$f")")")"
done
echo "make_seeds: $(find "$out" -type f | wc -l) files in $out"
