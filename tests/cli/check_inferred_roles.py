"""Writes one training graph twice, with `__op_role` on every node and without (neither has
value_info), gradient post-processing chains of 0 to 3 nodes after the whole backward, runs
rewrite-graph on both, and checks that the roles it infers equal the explicit ones node for node
and that `--overlap` moves the same nodes into the same schedule. Prints "OK: N nodes moved".

Usage: check_inferred_roles.py REWRITE_GRAPH OUT_DIR
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FORWARD, BACKWARD, OPTIMIZER, LOSS_BIT = 0, 1, 2, 256


def make_model(path, roles):
    def node(op, inputs, outputs, role, domain="", **attrs):
        n = helper.make_node(op, inputs, outputs, name=f"{outputs[0]}.{op.lower()}",
                             domain=domain, **attrs)
        if roles:
            n.attribute.append(helper.make_attribute("__op_role", role))
        return n

    rng = np.random.default_rng(0)
    params = {"w0": (3, 3), "b0": (3,), "w1": (3, 2), "b1": (2,)}
    inits = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
             for name, shape in params.items()]
    inits += [numpy_helper.from_array(np.array(2.0 / 8, np.float32), "two_over_n"),
              numpy_helper.from_array(np.array(0.5, np.float32), "grad_scale"),
              numpy_helper.from_array(np.array([0], np.int64), "axes0")]
    nodes = [
        node("MatMul", ["x", "w0"], ["h0"], FORWARD),
        node("Add", ["h0", "b0"], ["z0"], FORWARD),
        node("Relu", ["z0"], ["a0"], FORWARD),
        node("MatMul", ["a0", "w1"], ["h1"], FORWARD),
        node("Add", ["h1", "b1"], ["z1"], FORWARD),
        node("Sub", ["z1", "y"], ["d"], FORWARD),
        node("Mul", ["d", "d"], ["sq"], FORWARD),
        node("ReduceMean", ["sq"], ["loss"], FORWARD | LOSS_BIT, keepdims=0),
        node("Mul", ["d", "two_over_n"], ["dz1"], BACKWARD),
        node("ReduceSum", ["dz1", "axes0"], ["b1.grad"], BACKWARD, keepdims=0),
        node("Transpose", ["a0"], ["a0T"], BACKWARD),
        node("MatMul", ["a0T", "dz1"], ["w1.grad"], BACKWARD),
        node("Transpose", ["w1"], ["w1T"], BACKWARD),
        node("MatMul", ["dz1", "w1T"], ["da0"], BACKWARD),
        node("ReluGrad", ["da0", "a0"], ["dz0"], BACKWARD, domain="org.zerograph"),
        node("ReduceSum", ["dz0", "axes0"], ["b0.grad"], BACKWARD, keepdims=0),
        node("Transpose", ["x"], ["xT"], BACKWARD),
        node("MatMul", ["xT", "dz0"], ["w0.grad"], BACKWARD),
    ]
    # Post-processing after the whole backward: chains of 0 (w0) to 3 (b1) nodes.
    grads = {}
    for length, name in enumerate(params):
        value = f"{name}.grad"
        steps = [("Identity", {}), ("Cast", {"to": TensorProto.FLOAT}), ("Mul", {})]
        for op, attrs in steps[:length]:
            out = f"{name}.grad.{op.lower()}"
            inputs = [value, "grad_scale"] if op == "Mul" else [value]
            nodes.append(node(op, inputs, [out], OPTIMIZER, **attrs))
            value = out
        grads[name] = value
    nodes.append(node("SGD", ["lr", *params, *grads.values()], [f"{p}.new" for p in params],
                      OPTIMIZER, domain="org.zerograph"))
    outputs = [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])]
    outputs += [helper.make_tensor_value_info(f"{p}.new", TensorProto.FLOAT, shape)
                for p, shape in params.items()]
    graph = helper.make_graph(
        nodes, "chains",
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
                helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2]),
                helper.make_tensor_value_info("lr", TensorProto.FLOAT, [])],
        outputs=outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("org.zerograph", 1)])
    model.ir_version = 8
    binding = ", ".join(f'"{p}.new": "{p}"' for p in params)
    helper.set_model_props(model, {
        "zerograph.format_version": "1",
        "zerograph.loss": "loss",
        "zerograph.inputs": '{"data": ["x", "y"], "lr": "lr"}',
        "zerograph.state_binding": "{" + binding + "}",
    })
    onnx.checker.check_model(model)
    onnx.save(model, path)


def roles_of(path):
    return [(n.name, [a.i for a in n.attribute if a.name == "__op_role"])
            for n in onnx.load(path).graph.node]


def rewrite(rewrite_graph, source, out, *options):
    run = subprocess.run([rewrite_graph, source, "-o", out, *options], capture_output=True,
                         text=True, check=True)
    return run.stdout


def main(rewrite_graph, out_dir):
    explicit, bare = os.path.join(out_dir, "chains.onnx"), os.path.join(out_dir, "chains.bare.onnx")
    make_model(explicit, roles=True)
    make_model(bare, roles=False)
    copied = os.path.join(out_dir, "chains.bare.copy.onnx")
    rewrite(rewrite_graph, bare, copied)
    assert roles_of(copied) == roles_of(explicit), (roles_of(copied), roles_of(explicit))
    moved = []
    schedules = []
    for source in (explicit, bare):
        out = source.replace(".onnx", ".n2.onnx")
        report = rewrite(rewrite_graph, source, out, "--nranks", "2", "--overlap", "--report")
        moved.append(int(re.search(r"nodes moved after their backward op: (\d+)", report)[1]))
        schedules.append([(n.op_type, list(n.output)) for n in onnx.load(out).graph.node])
    assert moved[0] == moved[1] == 6, moved  # 0 + 1 + 2 + 3 chain nodes
    assert schedules[0] == schedules[1], "the overlap pass scheduled the two graphs differently"
    print(f"OK: {moved[1]} nodes moved")


if __name__ == "__main__":
    main(*sys.argv[1:])
