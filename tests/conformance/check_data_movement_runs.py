#!/usr/bin/python3
"""zg-run-once on data-movement graphs the node tests lack.

usage: check_data_movement_runs.py ZG_RUN_ONCE

- Opset 9's forms, with axes, starts, ends and split as attributes: Slice, Split, Squeeze,
  Unsqueeze, and Flatten.
- A transformer's shape arithmetic, Shape -> Gather -> Unsqueeze -> Concat -> Reshape, plans (the
  executor computes the int64 chain while planning) and reshapes right.
- Bad inputs fail with exit code 2 or 3 and a message naming the node, without a crash: a Gather
  index out of range at run time, a Reshape that cannot hold the elements, a Concat of mismatched
  shapes.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def write_case(root, name, nodes, inputs, outputs, initializers, feeds, opset=17):
    folder = os.path.join(root, name)
    os.makedirs(os.path.join(folder, "data"))
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, value in enumerate(feeds):
        tensor = numpy_helper.from_array(value)
        with open(os.path.join(folder, "data", f"input_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    return folder


def run(driver, folder):
    out = os.path.join(folder, "out")
    result = subprocess.run([driver, os.path.join(folder, "model.onnx"),
                             os.path.join(folder, "data"), out],
                            capture_output=True, text=True, timeout=60)
    return result, out


def main():
    driver = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix="zg-data-movement-") as root:
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        float_in = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)

        # [batch, seq, hidden] -> [batch, seq, 2, hidden / 2], with the sizes read from x.
        chain = write_case(
            root, "shape_chain",
            [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "i01"], ["bs"], name="take_batch_seq", axis=0),
             helper.make_node("Concat", ["bs", "heads"], ["target"], name="cat", axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"], name="split_heads")],
            [float_in], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.array([0, 1], np.int64), "i01"),
             numpy_helper.from_array(np.array([2, -1], np.int64), "heads")],
            [x])
        result, out = run(driver, chain)
        if result.returncode != 0:
            failures.append(f"shape_chain: exit {result.returncode}: {result.stderr.strip()}")
        else:
            with open(os.path.join(out, "output_0.pb"), "rb") as f:
                y = numpy_helper.to_array(onnx.TensorProto.FromString(f.read()))
            if y.shape != (2, 3, 2, 2) or not np.array_equal(y, x.reshape(2, 3, 2, 2)):
                failures.append(f"shape_chain: got shape {y.shape}")

        # Opset 9: the attribute forms, against numpy.
        old = write_case(
            root, "opset9_attributes",
            [helper.make_node("Slice", ["x"], ["s"], axes=[2, 0], starts=[1, -1], ends=[100, 2]),
             helper.make_node("Split", ["x"], ["p0", "p1"], axis=1, split=[1, 2]),
             helper.make_node("Unsqueeze", ["p0"], ["u"], axes=[0, 3]),
             helper.make_node("Squeeze", ["u"], ["q"], axes=[0, 2]),
             helper.make_node("Flatten", ["p1"], ["f"], axis=2)],
            [float_in], [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                         for n in ("s", "p1", "q", "f")], [], [x], opset=9)
        expected = [x[1:2, :, 1:], x[:, 1:3], x[:, 0:1], x[:, 1:3].reshape(4, 4)]
        result, out = run(driver, old)
        if result.returncode != 0:
            failures.append(f"opset9_attributes: exit {result.returncode}: {result.stderr.strip()}")
        else:
            for i, want in enumerate(expected):
                with open(os.path.join(out, f"output_{i}.pb"), "rb") as f:
                    got = numpy_helper.to_array(onnx.TensorProto.FromString(f.read()))
                if got.shape != want.shape or not np.array_equal(got, want):
                    failures.append(f"opset9_attributes: output {i} is {got.shape}, "
                                    f"wanted {want.shape}")

        bad = [
            ("gather_out_of_range", "gather_rows", "out of range",
             [helper.make_node("Gather", ["x", "i"], ["y"], name="gather_rows", axis=1)],
             [float_in, helper.make_tensor_value_info("i", TensorProto.INT64, None)], [],
             [x, np.array([0, 3], np.int64)]),
            ("reshape_too_small", "reshape_bad", "cannot reshape",
             [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape_bad")],
             [float_in], [numpy_helper.from_array(np.array([5, 5], np.int64), "shape")], [x]),
            ("concat_mismatch", "concat_bad", "does not concatenate",
             [helper.make_node("Concat", ["x", "z"], ["y"], name="concat_bad", axis=0)],
             [float_in, helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [],
             [x, np.zeros((1, 2, 4), np.float32)]),
        ]
        for name, node_name, words, nodes, inputs, initializers, feeds in bad:
            folder = write_case(root, name, nodes, inputs,
                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                initializers, feeds)
            result, _ = run(driver, folder)
            message = result.stderr + result.stdout
            if result.returncode not in (2, 3) or node_name not in message or words not in message:
                failures.append(f"{name}: exit {result.returncode}, wanted 2 or 3 and a message "
                                f"naming '{node_name}' with '{words}': {message.strip()}")

    for failure in failures:
        print("FAIL", failure)
    print(f"{5 - len(failures)} of 5 passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
