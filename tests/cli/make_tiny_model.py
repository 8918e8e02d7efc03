"""Writes a tiny training graph (docs/formats.md, "Training graph") for the CLI tests, so that they do not depend on
the generated models: y_hat = relu(x @ w + b), loss = mean((y_hat - y)^2), SGD on w and b.

Usage: make_tiny_model.py OUT.onnx [--no-optimizer]
  --no-optimizer: the same graph without its SGD node (gradients are outputs, nothing is bound), a
                  training graph with nothing to shard.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FORWARD, BACKWARD, OPTIMIZER, LOSS_BIT = 0, 1, 2, 256


def node(op, inputs, outputs, role, domain="", **attrs):
    n = helper.make_node(op, inputs, outputs, name=f"{outputs[0]}.{op.lower()}", domain=domain,
                         **attrs)
    n.attribute.append(helper.make_attribute("__op_role", role))
    return n


def main(path, optimizer=True):
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "w"),
        numpy_helper.from_array(np.zeros(2, np.float32), "b"),
        numpy_helper.from_array(np.array(2.0 / 8, np.float32), "two_over_n"),
        numpy_helper.from_array(np.array([0], np.int64), "axes0"),
    ]
    nodes = [
        node("MatMul", ["x", "w"], ["h"], FORWARD),
        node("Add", ["h", "b"], ["z"], FORWARD),
        node("Relu", ["z"], ["a"], FORWARD),
        node("Sub", ["a", "y"], ["d"], FORWARD),
        node("Mul", ["d", "d"], ["sq"], FORWARD),
        node("ReduceMean", ["sq"], ["loss"], FORWARD | LOSS_BIT, keepdims=0),
        node("Mul", ["d", "two_over_n"], ["da"], BACKWARD),
        node("ReluGrad", ["da", "a"], ["dz"], BACKWARD, domain="org.zerograph"),
        node("ReduceSum", ["dz", "axes0"], ["b.grad"], BACKWARD, keepdims=0),
        node("Transpose", ["x"], ["xT"], BACKWARD),
        node("MatMul", ["xT", "dz"], ["w.grad"], BACKWARD),
        node("SGD", ["lr", "w", "b", "w.grad", "b.grad"], ["w.new", "b.new"], OPTIMIZER,
             domain="org.zerograph"),
    ]
    outputs = [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
               helper.make_tensor_value_info("w.new", TensorProto.FLOAT, [3, 2]),
               helper.make_tensor_value_info("b.new", TensorProto.FLOAT, [2])]
    state_binding = '{"w.new": "w", "b.new": "b"}'
    if not optimizer:
        nodes.pop()
        outputs = [outputs[0], helper.make_tensor_value_info("w.grad", TensorProto.FLOAT, [3, 2]),
                   helper.make_tensor_value_info("b.grad", TensorProto.FLOAT, [2])]
        state_binding = "{}"
    graph = helper.make_graph(
        nodes, "tiny_mlp",
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
                helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2]),
                helper.make_tensor_value_info("lr", TensorProto.FLOAT, [])],
        outputs=outputs,
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("org.zerograph", 1)])
    model.ir_version = 8
    helper.set_model_props(model, {
        "zerograph.format_version": "1",
        "zerograph.loss": "loss",
        "zerograph.inputs": '{"data": ["x", "y"], "lr": "lr"}',
        "zerograph.state_binding": state_binding,
    })
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1], optimizer="--no-optimizer" not in sys.argv[2:])
