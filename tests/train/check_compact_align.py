#!/usr/bin/env python3
"""--align compact, end to end on 2 ranks: on a graph of small parameters (9, 3, 6 and 2 fp32
elements) the compact layout pads only the bucket's end (48 bytes against the seed rule's 432),
trains to the seed layout's losses bit for bit, and its checkpoint is refused by the seed-layout
graph (exit 2), converts to the seed layout and back, and resumed from the converted checkpoint,
the seed-layout graph continues with the losses of an uninterrupted run, bit for bit.

usage: check_compact_align.py BUILD_DIR MPIEXEC [MPI_PREFLAGS...]
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from check_inferred_roles import make_model  # noqa: E402  the graph of small parameters

STEPS, RESUMED_STEPS, GLOBAL_BATCH = 10, 12, 8


def run(cmd, expect=0):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if result.returncode != expect:
        sys.exit(f"FAILED ({result.returncode}, expected {expect}): {' '.join(cmd)}\n"
                 f"{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def losses(path):
    with open(path) as log:
        return [line.split()[3] for line in log if not line.startswith("#")]


def write_data(path):
    rng = np.random.default_rng(1)
    tensors = {"x": rng.standard_normal((32, 3)).astype(np.float32),
               "y": rng.standard_normal((32, 2)).astype(np.float32)}
    header, offset = {}, 0
    for name, array in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text)
        for array in tensors.values():
            out.write(array.tobytes())


def main():
    build, mpiexec, *preflags = sys.argv[1:]
    apps = os.path.join(build, "apps")
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)  # noqa: E731
        make_model(path("chains.onnx"), roles=True)
        write_data(path("data.safetensors"))

        def train(graph, steps, log, *extra):
            return run([mpiexec, "-np", "2", *preflags, os.path.join(apps, "graph-exec"), graph,
                        "--data", path("data.safetensors"), "--steps", str(steps), "--lr", "0.01",
                        "--batch", str(GLOBAL_BATCH), "--loss-log", log, *extra])

        padding = {}
        for align in ("seed", "compact"):
            report = run([os.path.join(apps, "rewrite-graph"), path("chains.onnx"), "-o",
                          path(f"{align}.onnx"), "--nranks", "2", "--overlap", "--align", align,
                          "--report"])
            padding[align] = int(re.search(r"padding: (\d+) bytes in all", report)[1])
            train(path(f"{align}.onnx"), STEPS, path(f"{align}.log"), "--save", path(f"ck_{align}"))
        assert padding == {"seed": 432, "compact": 48}, padding
        assert losses(path("seed.log")) == losses(path("compact.log")), "losses differ"

        convert = os.path.join(apps, "checkpoint-convert")
        run([mpiexec, "-np", "2", *preflags, os.path.join(apps, "graph-exec"), path("seed.onnx"),
             "--data", path("data.safetensors"), "--steps", str(RESUMED_STEPS), "--batch",
             str(GLOBAL_BATCH), "--load", path("ck_compact")], expect=2)
        run([convert, path("ck_compact"), path("as_seed"), "--to", "unbalanced", "--nranks", "2",
             "--graph", path("seed.onnx")])
        run([convert, path("as_seed"), path("back"), "--to", "unbalanced", "--nranks", "2",
             "--graph", path("compact.onnx")])
        for name in ("ck_compact", "back"):
            run([convert, path(name), path(f"{name}.consolidated"), "--to", "consolidated",
                 "--with-states"])
        with open(path("ck_compact.consolidated/model.safetensors"), "rb") as a, \
                open(path("back.consolidated/model.safetensors"), "rb") as b:
            assert a.read() == b.read(), "compact -> seed -> compact changed the checkpoint"

        train(path("seed.onnx"), RESUMED_STEPS, path("resumed.log"), "--load", path("as_seed"))
        train(path("seed.onnx"), RESUMED_STEPS, path("full.log"))
        assert losses(path("resumed.log")) == losses(path("full.log"))[STEPS:], "resume differs"
        print(f"OK: padding {padding['compact']} bytes compact, {padding['seed']} seed; "
              f"{STEPS} steps bit-identical; converted and resumed bit-identically")


if __name__ == "__main__":
    main()
