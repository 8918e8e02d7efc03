#!/usr/bin/env python3
"""checkpoint-convert --dry-run prints a plan that is true: for each output file, each piece it will
hold and the input ranges (file, stored tensor, bytes of its piece there) or padding zeros it is
copied from, with byte counts that add up, and writes nothing. The real conversion then holds,
piece for piece, exactly the bytes the plan named.

usage: check_dry_run.py BUILD_DIR MPIEXEC [MPI_PREFLAGS...]
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

PIECE = re.compile(r"^    (\S+) \[(\d+), (\d+)\) of (\S+) \[([\d,]*)\] (\w+), (\d+) bytes$")
SOURCE = re.compile(r"^      <- (\S+): (\S+) bytes \[(\d+), (\d+)\), (\d+) bytes$")
ZEROS = re.compile(r"^      <- zeros \(padding\), (\d+) bytes$")
FILE = re.compile(r"^  (\S+\.safetensors): (\d+) bytes$")
READS = re.compile(r"^  reads (\d+) bytes from (\S+)$")


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def tensor_bytes(path):
    """{name: bytes} of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    base = 8 + length
    return {name: data[base + info["data_offsets"][0]:base + info["data_offsets"][1]]
            for name, info in header.items()}


def parse_plan(text):
    """[(file, tensor, piece bytes, [(source file, stored tensor, begin, end) | ('zeros', n)])]"""
    pieces, reads, file_bytes = [], {}, {}
    file = None
    for line in text.splitlines():
        if m := FILE.match(line):
            file = m[1]
            file_bytes[file] = int(m[2])
        elif m := PIECE.match(line):
            assert m[1] == m[4], line
            pieces.append((file, m[1], int(m[7]), []))
        elif m := SOURCE.match(line):
            begin, end = int(m[3]), int(m[4])
            assert end - begin == int(m[5]) and begin < end, line
            pieces[-1][3].append((m[1], m[2], begin, end))
        elif m := ZEROS.match(line):
            pieces[-1][3].append(("zeros", int(m[1])))
        elif m := READS.match(line):
            reads[m[2]] = int(m[1])
    return pieces, reads, file_bytes


def check_plan(text, in_dir, what):
    pieces, reads, file_bytes = parse_plan(text)
    assert pieces and file_bytes and reads, f"{what}: no plan in\n{text}"
    read_sum = {}
    for file, tensor, size, sources in pieces:
        assert sources, f"{what}: {file} {tensor} has no source"
        covered = 0
        for source in sources:
            if source[0] == "zeros":
                covered += source[1]
                continue
            covered += source[3] - source[2]
            read_sum[source[0]] = read_sum.get(source[0], 0) + source[3] - source[2]
            assert os.path.exists(os.path.join(in_dir, source[0])), f"{what}: {source}"
        assert covered == size, f"{what}: {file} {tensor}: sources cover {covered} of {size} bytes"
    for file, total in file_bytes.items():
        assert total == sum(p[2] for p in pieces if p[0] == file), f"{what}: {file} total"
    assert reads == read_sum, f"{what}: per-file reads {reads} vs sources {read_sum}"
    return pieces


def check_output(pieces, in_dir, out_dir, what):
    """Each output piece holds the bytes its plan named."""
    inputs, outputs = {}, {}
    for file, tensor, size, sources in pieces:
        if file not in outputs:
            outputs[file] = tensor_bytes(os.path.join(out_dir, file))
        expected = b""
        for source in sources:
            if source[0] == "zeros":
                expected += bytes(source[1])
                continue
            if source[0] not in inputs:
                inputs[source[0]] = tensor_bytes(os.path.join(in_dir, source[0]))
            expected += inputs[source[0]][source[1]][source[2]:source[3]]
        assert outputs[file][tensor] == expected, f"{what}: {file} {tensor} differs from its plan"


def main():
    build, mpiexec, *preflags = sys.argv[1:]
    apps = os.path.join(build, "apps")
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    convert = os.path.join(apps, "checkpoint-convert")
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        for n in (2, 3):
            graphs[n] = os.path.join(tmp, f"mlp_demo.{n}.onnx")
            run([os.path.join(apps, "rewrite-graph"), os.path.join(source, "models", "mlp_demo.onnx"),
                 "-o", graphs[n], "--nranks", str(n)])
        save = os.path.join(tmp, "save")
        run([mpiexec, "-np", "2", *preflags, os.path.join(apps, "graph-exec"), graphs[2], "--data",
             os.path.join(source, "models", "mlp_demo_data.safetensors"), "--steps", "2", "--save",
             save])
        in_dir = os.path.join(save, "step-000001")
        for what, args in (("balanced 3", ["--to", "balanced", "--nranks", "3"]),
                           ("unbalanced 3", ["--to", "unbalanced", "--graph", graphs[3]]),
                           ("consolidated", ["--to", "consolidated", "--with-states"])):
            out = os.path.join(tmp, what.replace(" ", "_"))
            text = run([convert, in_dir, out, *args, "--dry-run"])
            assert "nothing written (--dry-run)" in text, text
            leftovers = [f for f in os.listdir(tmp) if f.startswith(os.path.basename(out))]
            assert not leftovers, f"{what}: --dry-run wrote {leftovers}"
            pieces = check_plan(text, in_dir, what)
            if what == "unbalanced 3":
                assert any(s[0] == "zeros" for p in pieces for s in p[3]), f"{what}: no padding"
            run([convert, in_dir, out, *args])
            check_output(pieces, in_dir, out, what)
            print(f"{what}: {len(pieces)} pieces, the plan matches the converted bytes")


if __name__ == "__main__":
    main()
