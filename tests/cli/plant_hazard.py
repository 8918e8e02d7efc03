"""Plants a hazard in a rewritten graph by hand (the all-gather moved to the compute stream, so
collectives run on two streams and ranks could issue them in different orders), then runs
`rewrite-graph --check` on it, or `rewrite-graph OUT.onnx ARGS...` when ARGS are given, and exits
with its exit code.

Usage: plant_hazard.py REWRITTEN.onnx OUT.onnx REWRITE_GRAPH [ARGS...]
"""
import subprocess
import sys

import onnx


def main(rewritten, out, rewrite_graph, *args):
    model = onnx.load(rewritten)
    gathers = [n for n in model.graph.node if n.op_type == "AllGather"]
    assert gathers, "no AllGather in the rewritten graph"
    for attr in gathers[0].attribute:
        if attr.name == "__execution_stream":
            attr.s = b"default"
    onnx.save(model, out)
    command = [rewrite_graph, out, *args] if args else [rewrite_graph, "--check", out]
    sys.exit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main(*sys.argv[1:])
