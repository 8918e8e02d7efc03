"""Checks that rewrite-graph's output (no passes) passes ONNX's checker and keeps the input's graph:
the same nodes in the same order with the same edges and attributes, the same initializers (bytes
included), inputs, outputs and metadata, at IR version 8.

Usage: check_roundtrip.py IN.onnx OUT.onnx
"""
import sys

import onnx
from onnx import numpy_helper


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main(in_path, out_path):
    original = onnx.load(in_path)
    rewritten = onnx.load(out_path)
    onnx.checker.check_model(rewritten)
    if rewritten.ir_version != 8:
        fail(f"IR version {rewritten.ir_version}, expected 8")

    a, b = original.graph, rewritten.graph
    if len(a.node) != len(b.node):
        fail(f"{len(b.node)} nodes, expected {len(a.node)}")
    for i, (m, n) in enumerate(zip(a.node, b.node)):
        if (m.op_type, m.domain, m.name, list(m.input), list(m.output)) != (
                n.op_type, n.domain, n.name, list(n.input), list(n.output)):
            fail(f"node {i} differs: {n.name or n.op_type}")
        if {x.name: x for x in m.attribute} != {x.name: x for x in n.attribute}:
            fail(f"node {i} ({n.name}) has other attributes")
    for field in ("input", "output"):
        names = lambda g: [v.name for v in getattr(g, field)]
        if names(a) != names(b):
            fail(f"graph {field}s differ: {names(b)} vs {names(a)}")
    if sorted(t.name for t in a.initializer) != sorted(t.name for t in b.initializer):
        fail("initializer names differ")
    rewritten_inits = {t.name: t for t in b.initializer}
    for t in a.initializer:
        x, y = numpy_helper.to_array(t), numpy_helper.to_array(rewritten_inits[t.name])
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            fail(f"initializer '{t.name}' differs")
    meta = lambda m: {p.key: p.value for p in m.metadata_props}
    if meta(original) != meta(rewritten):
        fail(f"metadata differs: {meta(rewritten)} vs {meta(original)}")
    print(f"OK: {len(b.node)} nodes, {len(b.initializer)} initializers, checker passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
