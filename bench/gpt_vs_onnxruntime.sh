#!/usr/bin/env bash
# A GPT-like model's forward pass, and one forward + backward step, on the CPU: zerograph's
# run-model-bench against ONNX Runtime on the same ONNX files and the same number of threads.
# Prints the Markdown of docs/benchmarks.md's gpt section (scripts/bench.sh --only gpt runs it).
#
# Usage: bench/gpt_vs_onnxruntime.sh --build DIR [--work DIR] [--threads N] [--rounds K]
#                                    [--reps R] [-- MODEL OPTIONS]
#   --build    the Release build with bench/run-model-bench
#   --work     where the models and inputs go (default: DIR/gpt-bench)
#   --threads  threads on each side (default: nproc, what OpenBLAS takes when left alone)
#   MODEL OPTIONS go to `gpt_vs_onnxruntime.py model` (--layers, --dim, --gelu erf, ...).
#
# Two Python virtual environments, made when missing (pip, by package name):
#   ZG_ORT_VENV           (default ~/.cache/zerograph/venv-ort):          onnxruntime 1.31.1, the
#                         inference package, for the forward pass
#   ZG_ORT_TRAINING_VENV  (default ~/.cache/zerograph/venv-ort-training): onnxruntime-training-cpu
#                         1.19.2 (its last release) with onnx 1.16 and numpy < 2: makes the
#                         training graph (generate_artifacts) and is the only ONNX Runtime with
#                         kernels for the com.microsoft gradient ops that graph holds
# They cannot share one environment: both packages install the module `onnxruntime`.
set -euo pipefail
cd "$(dirname "$0")/.."

build=
work=
threads=$(nproc)
rounds=5
reps=10
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "gpt_vs_onnxruntime: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$build" ] || { echo "gpt_vs_onnxruntime: --build DIR is needed" >&2; exit 2; }
work=${work:-$build/gpt-bench}
bench_bin=$build/bench/run-model-bench
[ -x "$bench_bin" ] || { echo "gpt_vs_onnxruntime: no $bench_bin (build target run-model-bench)" >&2; exit 2; }

ort_venv=${ZG_ORT_VENV:-$HOME/.cache/zerograph/venv-ort}
ort_training_venv=${ZG_ORT_TRAINING_VENV:-$HOME/.cache/zerograph/venv-ort-training}

# make_venv DIR PACKAGES...: a virtual environment with PACKAGES, made once.
make_venv() {
  local dir=$1
  shift
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c 'import onnx, onnxruntime' 2>/dev/null; then
    return 0
  fi
  echo "gpt_vs_onnxruntime: making $dir ($*)" >&2
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  python3 -m venv "$dir" >&2
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
}
make_venv "$ort_venv" onnxruntime==1.31.1 onnx==1.16.2 'numpy<2'
training=yes
if ! make_venv "$ort_training_venv" onnxruntime-training-cpu==1.19.2 onnx==1.16.2 'numpy<2'; then
  echo "gpt_vs_onnxruntime: cannot install onnxruntime-training-cpu: forward only" >&2
  training=no
fi

mkdir -p "$work"
maker=$ort_training_venv/bin/python
[ "$training" = yes ] || maker=$ort_venv/bin/python
"$maker" bench/gpt_vs_onnxruntime.py model "$work" "$@" >&2

python3 bench/gpt_vs_onnxruntime.py compare --work "$work" --bench "$bench_bin" \
  --ort-python "$ort_venv/bin/python" --ort-training-python "$ort_training_venv/bin/python" \
  --threads "$threads" --rounds "$rounds" --reps "$reps"
