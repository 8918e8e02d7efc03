"""Writes a copy of a model whose node NAME has an empty op_type (which ONNX's checker rejects), so
that the CLI tests can show rewrite-graph refusing it.

Usage: clear_op_type.py IN.onnx OUT.onnx NAME
"""
import sys

import onnx


def main(source, out, name):
    model = onnx.load(source)
    nodes = [n for n in model.graph.node if n.name == name]
    assert nodes, f"no node named {name}"
    nodes[0].op_type = ""
    onnx.save(model, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
