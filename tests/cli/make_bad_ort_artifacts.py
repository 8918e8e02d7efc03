#!/usr/bin/python3
"""Writes ONNX Runtime artifact folders that `rewrite-graph --from-ort` must refuse.

usage: make_bad_ort_artifacts.py REFERENCE_ROOT OUT_DIR

REFERENCE_ROOT is tests/data/ort_reference. Each folder under OUT_DIR breaks one thing:
  missing_checkpoint/     mlp's models without the checkpoint
  truncated_checkpoint/   mlp's checkpoint cut in half
  other_model/            gpt_tiny's models with mlp's checkpoint
  other_optimizer/        mlp's artifacts with a LambOptimizer optimizer model
  other_accumulation/     mlp's artifacts whose first accumulator is InPlaceAccumulator (v1)
"""

import os
import shutil
import sys

import onnx
from onnx import helper


def copy_artifacts(source, target, names=("training_model.onnx", "optimizer_model.onnx", "checkpoint")):
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    for name in names:
        shutil.copy(os.path.join(source, name), target)


def main():
    root, out = sys.argv[1:3]
    mlp = os.path.join(root, "mlp", "artifacts")
    gpt = os.path.join(root, "gpt_tiny", "artifacts")

    copy_artifacts(mlp, os.path.join(out, "missing_checkpoint"), ("training_model.onnx", "optimizer_model.onnx"))

    truncated = os.path.join(out, "truncated_checkpoint")
    copy_artifacts(mlp, truncated)
    with open(os.path.join(mlp, "checkpoint"), "rb") as f:
        data = f.read()
    with open(os.path.join(truncated, "checkpoint"), "wb") as f:
        f.write(data[:len(data) // 2])

    other_model = os.path.join(out, "other_model")
    copy_artifacts(gpt, other_model, ("training_model.onnx", "optimizer_model.onnx"))
    shutil.copy(os.path.join(mlp, "checkpoint"), other_model)

    other_optimizer = os.path.join(out, "other_optimizer")
    copy_artifacts(mlp, other_optimizer)
    model = onnx.load(os.path.join(mlp, "optimizer_model.onnx"))
    node = model.graph.node[0]
    node.op_type = "LambOptimizer"
    del node.attribute[:]
    onnx.save(model, os.path.join(other_optimizer, "optimizer_model.onnx"))

    other_accumulation = os.path.join(out, "other_accumulation")
    copy_artifacts(mlp, other_accumulation)
    model = onnx.load(os.path.join(mlp, "training_model.onnx"))
    next(n for n in model.graph.node if n.op_type == "InPlaceAccumulatorV2").op_type = "InPlaceAccumulator"
    onnx.save(model, os.path.join(other_accumulation, "training_model.onnx"))


if __name__ == "__main__":
    main()
