#!/usr/bin/python3
"""Trains one of ONNX Runtime's reference cases with zerograph and compares with ORT.

usage: check_against_ort.py SOURCE BIN_DIR REFERENCE_DIR WORK_DIR NRANKS [-- MPIEXEC...]

SOURCE says where the training graph comes from:
  ort       ORT's own training artifacts, imported by `rewrite-graph --from-ort`;
  autodiff  the forward model, differentiated by `rewrite-graph --train` with ORT's loss (MSE for
            the MLP, cross-entropy for the GPT) and ORT's optimizer attributes.
BIN_DIR holds rewrite-graph, graph-exec and checkpoint-convert; REFERENCE_DIR is one of
tests/data/ort_reference/* (ORT's artifacts, the forward model, the data set, ORT's 20 losses and
its parameters after the last step). The run is ORT's: global batch 4, constant learning rate 1e-3,
batches in order.
  1. rewrite-graph makes the training graph (with --nranks NRANKS --overlap above 1 rank);
  2. graph-exec trains 20 steps on NRANKS ranks (under MPIEXEC when given), saving a checkpoint
     after the last step; checkpoint-convert makes it one safetensors file;
  3. every step's loss is within 1e-4 relative of ORT's, and every final parameter within 1e-4 of
     ORT's: max |ours - ORT's| / max |ORT's| per parameter, the denominator at least 1e-3 of the
     model's largest value. (The floor is for parameters whose gradient is zero in exact arithmetic,
     the transformer's key biases: softmax ignores a constant added to every score of a row, so
     their values are Adam steps on rounding noise, ~1e-8, different in any other summation order.)
Exits 0 when all hold, 1 otherwise, printing the largest differences either way.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx

from check_ort_reference import read_safetensors

LOSS_RTOL = 1e-4
PARAM_TOL = 1e-4
PARAM_SCALE_FLOOR = 1e-3


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}\n{result.stdout}{result.stderr}")
    return result.stdout


def train_options(reference, forward):
    """rewrite-graph --train options for ORT's loss and optimizer as reference.json records them,
    and --frozen for each floating initializer of `forward` that ORT did not train (the GPT's
    causal mask and attention scale)."""
    optimizer = reference["optimizer"]
    if optimizer["op"] != "com.microsoft.AdamWOptimizer":
        sys.exit(f"reference optimizer {optimizer['op']} has no --train equivalent here")
    loss = {"mlp": "mse", "gpt": "cross-entropy"}[reference["kind"]]
    options = ["--train", "--loss", loss, "--label", reference["label"], "--optimizer", "adamw",
               "--adam-mode", str(optimizer["adam_mode"]), "--beta1", repr(optimizer["alpha"]),
               "--beta2", repr(optimizer["beta"]), "--epsilon", repr(optimizer["epsilon"]),
               "--weight-decay", repr(optimizer["weight_decay"])]
    if not optimizer["correct_bias"]:
        options.append("--no-bias-correction")
    floating = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
                onnx.TensorProto.DOUBLE}
    for tensor in onnx.load(forward).graph.initializer:
        if tensor.data_type in floating and tensor.name not in reference["parameters"]:
            options += ["--frozen", tensor.name]
    return options


def main():
    args = sys.argv[1:]
    mpiexec = args[args.index("--") + 1:] if "--" in args else []
    source, bin_dir, ref_dir, work_dir, nranks = args[:5]
    nranks = int(nranks)
    reference = json.load(open(os.path.join(ref_dir, "reference.json")))
    settings = reference["settings"]
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)
    graph = os.path.join(work_dir, "train.onnx")
    rewrite = [os.path.join(bin_dir, "rewrite-graph")]
    if source == "ort":
        rewrite += ["--from-ort", os.path.join(ref_dir, "artifacts")]
    elif source == "autodiff":
        forward = os.path.join(ref_dir, "forward.onnx")
        rewrite += [forward] + train_options(reference, forward)
    else:
        sys.exit(f"unknown SOURCE {source!r}: 'ort' or 'autodiff'")
    rewrite += ["-o", graph]
    if nranks > 1:
        rewrite += ["--nranks", str(nranks), "--overlap"]
    run(rewrite)

    losses = os.path.join(work_dir, "losses.txt")
    saved = os.path.join(work_dir, "ckpt")
    launch = mpiexec + ["-np", str(nranks)] if mpiexec else []
    run(launch + [os.path.join(bin_dir, "graph-exec"), graph, "--data", os.path.join(ref_dir, "data.safetensors"),
                  "--steps", str(settings["steps"]), "--batch", str(settings["batch"]), "--lr", str(settings["lr"]),
                  "--lr-schedule", "constant", "--loss-log", losses, "--save", saved, "--save-format", "balanced",
                  "--no-progress", "--device", "cpu"])
    consolidated = os.path.join(work_dir, "consolidated")
    last = os.path.join(saved, "step-%06d" % (settings["steps"] - 1))
    run([os.path.join(bin_dir, "checkpoint-convert"), last, consolidated, "--to", "consolidated"])

    ours = {}
    for line in open(losses):
        if line.startswith("#"):
            continue
        step, loss = line.split()[:2]
        ours[int(step)] = float(loss)
    failures = []
    worst_loss = 0.0
    for entry in reference["losses"]:
        step, expected = entry["step"], entry["loss"]
        if step not in ours:
            failures.append(f"step {step}: no loss logged")
            continue
        rel = abs(ours[step] - expected) / abs(expected)
        worst_loss = max(worst_loss, rel)
        if rel > LOSS_RTOL:
            failures.append(f"step {step}: loss {ours[step]!r}, ONNX Runtime's {expected!r} (rel {rel:.3g})")

    expected_params = read_safetensors(os.path.join(ref_dir, "params_final.safetensors"))
    trained = read_safetensors(os.path.join(consolidated, "model.safetensors"))
    model_scale = max(float(np.max(np.abs(p))) for p in expected_params.values())
    worst_param, worst_name = 0.0, ""
    for name, expected in expected_params.items():
        if name not in trained:
            failures.append(f"parameter {name}: missing from the trained checkpoint")
            continue
        got = trained[name]
        if got.shape != expected.shape:
            failures.append(f"parameter {name}: shape {got.shape}, ONNX Runtime's {expected.shape}")
            continue
        scale = max(float(np.max(np.abs(expected))), PARAM_SCALE_FLOOR * model_scale)
        diff = float(np.max(np.abs(got.astype(np.float64) - expected))) / scale
        if diff >= worst_param:
            worst_param, worst_name = diff, name
        if diff > PARAM_TOL:
            failures.append(f"parameter {name}: max abs difference / max abs value {diff:.3g}")

    print(f"{os.path.basename(ref_dir)} ({source}) on {nranks} rank(s): largest loss difference {worst_loss:.3g} "
          f"(relative), largest parameter difference {worst_param:.3g} ({worst_name}: max abs diff / max abs value)")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
