"""Gives one node of a training graph an op no kernel implements, then trains it with graph-exec
and exits with its exit code (the error must name the node before step 1).

Usage: run_with_unknown_op.py MODEL.onnx OUT.onnx GRAPH_EXEC DATA.safetensors
"""
import subprocess
import sys

import onnx


def main(model_path, out, graph_exec, data):
    model = onnx.load(model_path)
    node = next(n for n in model.graph.node if n.op_type == "ReluGrad")
    node.op_type = "NoSuchGrad"
    onnx.save(model, out)
    result = subprocess.run([graph_exec, out, "--data", data, "--steps", "1"])
    sys.exit(result.returncode)


if __name__ == "__main__":
    main(*sys.argv[1:])
