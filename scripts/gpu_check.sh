#!/usr/bin/env bash
# The GPU check (issue 6), for one run of at most 10 minutes on a machine with one NVIDIA GPU:
#   1. every CUDA kernel against the CPU kernel on random data, and the fused AdamW update's
#      bytes/s next to a device-to-device copy (gpu-kernel-check);
#   2. 1-rank training of mlp_demo and mlp_wide on the GPU against the same training on the CPU;
#   3. a trace of mlp_wide on the GPU: time the communication stream ran beside compute;
#   4. mlp_wide's median step time on the GPU, rewritten with and without --overlap.
# It prints a short table last, and writes it with every log to $OUT when set (the device tool's
# folder that comes back), else to gpu-check-out/.
#
# Usage: scripts/gpu_check.sh [BUNDLE]
#   BUNDLE: the output of scripts/build_portable.sh, its .tar.gz (the default:
#   build-portable/zerograph-portable.tar.gz) or its dist folder; or a normal build folder.
# Exit: 0 every check passed, 1 a check failed, 3 no GPU (nothing was checked).
set -uo pipefail
cd "$(dirname "$0")/.."

bundle=${1:-build-portable/zerograph-portable.tar.gz}
out=${OUT:-gpu-check-out}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf '== %s\n' "$*" | tee -a "$out/gpu_check.log"; }
results=()
result() { results+=("| $1 | $2 | $3 |"); }

# --- the programs and their libraries ---------------------------------------------------------
if [[ $bundle == *.tar.gz ]]; then
  mkdir "$work/bundle" && tar -C "$work/bundle" -xzf "$bundle" || { echo "gpu_check: cannot unpack $bundle" >&2; exit 1; }
  bin=$work/bundle/bin lib=$work/bundle/lib
elif [ -d "$bundle/bin" ]; then
  bin=$bundle/bin lib=$bundle/lib
else  # a normal build folder
  bin=$work/bin lib=$bundle
  mkdir "$bin"
  for program in graph-exec rewrite-graph generate-models gpu-kernel-check; do
    ln -s "$(realpath "$(find "$bundle" -name "$program" -type f -perm -u+x | head -1)")" "$bin/$program"
  done
fi
# cuBLAS and NCCL from the Python wheels (nvidia-cublas, nvidia-nccl-cu13), wherever pip put them.
wheel_libs=$(python3 - <<'EOF' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
found = {os.path.dirname(p) for r in roots if os.path.isdir(r)
         for pattern in ("libcublas.so*", "libcublasLt.so*", "libnccl.so*")
         for p in glob.glob(os.path.join(r, "nvidia", "**", pattern), recursive=True)}
print(":".join(sorted(found)))
EOF
)
export LD_LIBRARY_PATH=$lib${wheel_libs:+:$wheel_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
say "libraries: $LD_LIBRARY_PATH"
say "glibc: $(ldd --version 2>&1 | head -1)"
command -v nvidia-smi >/dev/null &&
  say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1)"
missing=$(ldd "$bin/graph-exec" 2>&1 | grep 'not found')
[ -z "$missing" ] || { echo "gpu_check: graph-exec cannot load: $missing" >&2; exit 1; }

# --- 1. kernels -------------------------------------------------------------------------------
say "kernels: every CUDA kernel against the CPU kernel"
"$bin/gpu-kernel-check" >"$out/kernels.md" 2>&1
status=$?
cat "$out/kernels.md"
if [ $status -eq 3 ]; then
  echo "gpu_check: no CUDA GPU found; nothing was checked" >&2
  exit 3
fi
result "kernels: CUDA against CPU (kernels.md)" "$(grep -c '| pass |' "$out/kernels.md") pass, $(grep -c '| FAIL' "$out/kernels.md") fail" \
  "$([ $status -eq 0 ] && echo pass || echo FAIL)"

# --- 2. training on the GPU against the CPU --------------------------------------------------
"$bin/generate-models" --model mlp_demo --out-dir "$work" >/dev/null &&
  "$bin/generate-models" --model mlp_wide --out-dir "$work" >/dev/null ||
  { echo "gpu_check: generate-models failed" >&2; exit 1; }
for model in mlp_demo mlp_wide; do
  "$bin/rewrite-graph" "$work/$model.onnx" -o "$work/$model.overlap.onnx" --nranks 1 --overlap >/dev/null &&
    "$bin/rewrite-graph" "$work/$model.onnx" -o "$work/$model.plain.onnx" --nranks 1 >/dev/null ||
    { echo "gpu_check: rewrite-graph failed on $model" >&2; exit 1; }
done

# train MODEL VARIANT DEVICE STEPS [ARGS...]: losses in $work/MODEL.VARIANT.DEVICE.loss, output in
# $out; returns graph-exec's status.
train() {
  local model=$1 variant=$2 device=$3 steps=$4
  shift 4
  "$bin/graph-exec" "$work/$model.$variant.onnx" --data "$work/${model}_data.safetensors" \
    --steps "$steps" --lr 0.001 --device "$device" --loss-log "$work/$model.$variant.$device.loss" \
    "$@" >"$out/$model.$variant.$device.txt" 2>&1
}
# The largest relative difference between two loss logs (columns: step loss lr bits).
loss_gap() {
  awk 'FNR == 1 {file++} /^#/ {next} file == 1 {a[$1] = $2; next}
       ($1 in a) {d = ($2 - a[$1]) / (a[$1] == 0 ? 1 : a[$1]); d = d < 0 ? -d : d;
                  if (d > m) m = d; n++}
       END {if (n == 0) print "none"; else printf "%.2e\n", m}' "$1" "$2"
}
for run in "mlp_demo 20" "mlp_wide 8"; do
  read -r model steps <<<"$run"
  say "training: $model, 1 rank, $steps steps, on the GPU and on the CPU"
  if train "$model" overlap cuda "$steps" && train "$model" overlap cpu "$steps"; then
    gap=$(loss_gap "$work/$model.overlap.cpu.loss" "$work/$model.overlap.cuda.loss")
    # TF32 is off and both sides add in fp32, so only the order of additions differs.
    verdict=$(awk -v g="$gap" 'BEGIN {print (g != "none" && g + 0 <= 1e-3) ? "pass" : "FAIL"}')
    result "training $model: GPU losses against CPU, $steps steps" "max relative difference $gap" "$verdict"
  else
    result "training $model: GPU losses against CPU" "graph-exec failed ($out/$model.overlap.*.txt)" FAIL
  fi
done

# --- 3. the trace: communication beside compute ----------------------------------------------
say "trace: mlp_wide on the GPU with --overlap"
if train mlp_wide overlap cuda 4 --trace "$work/trace.json"; then
  cp "$work/trace.json" "$out/trace.json"
  overlap=$(python3 - "$work/trace.json" <<'EOF'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
lane_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e.get("ph") == "M" and e["name"] == "thread_name"}
comm, compute = [], {}
for e in (e for e in events if e.get("ph") == "X"):
    interval = (e["ts"], e["ts"] + e["dur"])
    if lane_names[(e["pid"], e["tid"])] == "auto_parallel_sharding":
        comm.append((e["pid"], interval))
    else:
        compute.setdefault(e["pid"], []).append(interval)
# Time inside communication events during which a compute event of the same rank also ran.
beside = 0.0
for pid, (start, end) in comm:
    covered = start
    overlapping = [(max(start, s), min(end, e)) for s, e in compute.get(pid, []) if s < end and e > start]
    for s, e in sorted(overlapping):
        if e > max(s, covered):
            beside += e - max(s, covered)
            covered = e
total = sum(e - s for _, (s, e) in comm)
print(f"{beside / 1000:.3f} ms of {total / 1000:.3f} ms of communication ran beside compute")
EOF
)
  verdict=$([[ -z $overlap || $overlap == 0.000\ ms* ]] && echo FAIL || echo pass)
  result "trace: communication stream beside compute (trace.json)" "${overlap:-python3 missing}" "$verdict"
else
  result "trace: mlp_wide with --trace" "graph-exec failed ($out/mlp_wide.overlap.cuda.txt)" FAIL
fi

# --- 4. step time with and without overlap ---------------------------------------------------
say "step time: mlp_wide on the GPU, with and without --overlap"
median_step() { grep -o 'median step [0-9.]* ms' "$1" | awk '{print $3}'; }
if train mlp_wide overlap cuda 30 && train mlp_wide plain cuda 30; then
  with=$(median_step "$out/mlp_wide.overlap.cuda.txt")
  without=$(median_step "$out/mlp_wide.plain.cuda.txt")
  result "mlp_wide median step, 1 rank: --overlap / without" "$with ms / $without ms" info
else
  result "mlp_wide median step" "graph-exec failed ($out/mlp_wide.*.cuda.txt)" FAIL
fi

# --- the table --------------------------------------------------------------------------------
{
  echo
  echo "gpu_check $(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  echo
  echo "| check | measured | result |"
  echo "|---|---|---|"
  printf '%s\n' "${results[@]}"
} | tee "$out/gpu_check.md"
grep -q '| FAIL |$' "$out/gpu_check.md" && exit 1
exit 0
