#!/usr/bin/python3
"""Writes one-node models whose attribute values or input shapes their op forbids.

usage: make_bad_node_models.py OUTDIR

Each case becomes OUTDIR/<case>/model.onnx with its inputs in OUTDIR/<case>/inputs/input_N.pb,
for `graph-exec --run-once`, which must refuse it naming the node (tests/conformance/
CMakeLists.txt holds the expected exit codes and messages).
"""

import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def write_case(out_dir, name, node, inputs, output_type, opset=17):
    graph_inputs = [helper.make_tensor_value_info(input_name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[
        array.dtype], array.shape) for input_name, array in inputs]
    graph = helper.make_graph([node], name, graph_inputs,
                              [helper.make_tensor_value_info(node.output[0], output_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    case_dir = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case_dir, "inputs"), exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for n, (input_name, array) in enumerate(inputs):
        tensor = numpy_helper.from_array(array, input_name)
        with open(os.path.join(case_dir, "inputs", f"input_{n}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())


def main():
    out_dir = sys.argv[1]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_case(out_dir, "softmax_axis_out_of_range",
               helper.make_node("Softmax", ["x"], ["y"], name="bad_softmax", axis=5),
               [("x", x)], TensorProto.FLOAT)
    write_case(out_dir, "gather_index_out_of_range",
               helper.make_node("Gather", ["data", "indices"], ["y"], name="bad_gather"),
               [("data", x), ("indices", np.array([1, 7], dtype=np.int64))], TensorProto.FLOAT)
    write_case(out_dir, "reshape_cannot_hold_elements",
               helper.make_node("Reshape", ["x", "shape"], ["y"], name="bad_reshape"),
               [("x", x), ("shape", np.array([4, 2], dtype=np.int64))], TensorProto.FLOAT)
    write_case(out_dir, "concat_of_mismatched_shapes",
               helper.make_node("Concat", ["a", "b"], ["y"], name="bad_concat", axis=0),
               [("a", x), ("b", np.zeros((2, 4), dtype=np.float32))], TensorProto.FLOAT)
    write_case(out_dir, "layer_norm_scale_of_wrong_shape",
               helper.make_node("LayerNormalization", ["x", "scale"], ["y"], name="bad_layer_norm"),
               [("x", x), ("scale", np.ones(4, dtype=np.float32))], TensorProto.FLOAT)
    write_case(out_dir, "cross_entropy_label_out_of_range",
               helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                                name="bad_loss"),
               [("scores", x), ("labels", np.array([0, 3], dtype=np.int64))], TensorProto.FLOAT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
