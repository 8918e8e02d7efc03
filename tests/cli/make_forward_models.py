"""Writes small forward models (no training metadata) for the rewrite-graph --train tests.

Usage: make_forward_models.py OUT_DIR
  classifier.onnx  x [batch, 8] -> Gemm -> Relu -> MatMul -> logits [batch, 4]
  no_weights.onnx  the weight is a graph input, not an initializer
  unknown_op.onnx  an op of another domain (com.foo.Bar) between the weight and the output
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(name, nodes, inputs, outputs, initializers, opsets):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    weight = lambda name, *dims: numpy_helper.from_array(
        rng.uniform(-0.5, 0.5, dims).astype(np.float32), name)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])

    onnx.save(model("classifier", [
        helper.make_node("Gemm", ["x", "w0", "b0"], ["h"]),
        helper.make_node("Relu", ["h"], ["a"]),
        helper.make_node("MatMul", ["a", "w1"], ["logits"]),
    ], [x], [logits], [weight("w0", 8, 16), weight("b0", 16), weight("w1", 16, 4)],
        [("", 17)]), os.path.join(out_dir, "classifier.onnx"))

    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [8, 4])
    onnx.save(model("no_weights", [helper.make_node("MatMul", ["x", "w"], ["y"])], [x, w], [y], [],
                    [("", 17)]), os.path.join(out_dir, "no_weights.onnx"))

    onnx.save(model("unknown_op", [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Bar", ["h"], ["y"], name="bar", domain="com.foo"),
    ], [x], [y], [weight("w", 8, 4)], [("", 17), ("com.foo", 1)]),
        os.path.join(out_dir, "unknown_op.onnx"))


if __name__ == "__main__":
    main(*sys.argv[1:])
