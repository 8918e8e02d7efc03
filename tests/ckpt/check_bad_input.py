#!/usr/bin/env python3
"""Bad checkpoints are refused with exit code 2 and the cause, by graph-exec --load (on 2 ranks,
neither hanging) and by checkpoint-convert, which then writes nothing.

usage: check_bad_input.py BUILD_DIR MPIEXEC [MPI_PREFLAGS...]
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile


def run(cmd, expect=0, pattern=None):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    text = result.stdout + result.stderr
    if result.returncode != expect or (pattern and not re.search(pattern, text, re.M)):
        sys.exit(f"FAILED: expected exit {expect} matching {pattern!r}, got {result.returncode}: "
                 f"{' '.join(cmd)}\n{text}")
    return text


def main():
    build, mpiexec, *preflags = sys.argv[1:]
    apps = os.path.join(build, "apps")
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = os.path.join(source, "models", "mlp_demo_data.safetensors")
    exec_ = os.path.join(apps, "graph-exec")
    convert = os.path.join(apps, "checkpoint-convert")
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        # ("mlp_demo", "2x2"): 2 ranks, the same global batch, another layout (two buckets).
        for model, n, extra in (("mlp_demo", 2, []), ("mlp_demo", 3, []), ("mlp_demo_sgd", 2, []),
                                ("mlp_demo", "2x2", ["--comm-buffer-mb", "0.0001"])):
            graphs[model, n] = os.path.join(tmp, f"{model}.{n}.onnx")
            run([os.path.join(apps, "rewrite-graph"), os.path.join(source, "models", f"{model}.onnx"),
                 "-o", graphs[model, n], "--nranks", str(n)[0], *extra])
        good = os.path.join(tmp, "good")
        run([mpiexec, "-np", "2", *preflags, exec_, graphs["mlp_demo", 2], "--data", data,
             "--steps", "2", "--save", good])
        good = os.path.join(good, "step-000001")
        other = os.path.join(tmp, "other")
        run([mpiexec, "-np", "2", *preflags, exec_, graphs["mlp_demo_sgd", 2], "--data", data,
             "--steps", "2", "--save", other])
        other = os.path.join(other, "step-000001")

        def case(name, corrupt, pattern, graph=("mlp_demo", 2), nranks=2, convert_pattern=None):
            ckpt = os.path.join(tmp, name)
            shutil.copytree(good, ckpt)
            corrupt(ckpt)
            run([mpiexec, "-np", str(nranks), *preflags, exec_, graphs[graph], "--data", data,
                 "--steps", "4", "--load", ckpt], 2, pattern.lstrip("^"))  # ranks' lines may interleave
            out = os.path.join(tmp, name + ".out")
            if graph == ("mlp_demo", 2):
                run([convert, ckpt, out, "--to", "balanced"], 2, convert_pattern or pattern)
                leftovers = [f for f in os.listdir(tmp) if f.startswith(name + ".out")]
                assert not leftovers, f"{name}: convert left {leftovers}"
            print(f"{name}: refused ({pattern})")

        rank1 = "rank-00001-of-00002.safetensors"

        def edit_file(name, edit):
            def corrupt(ckpt):
                path = os.path.join(ckpt, name)
                with open(path, "rb") as f:
                    data = bytearray(f.read())
                with open(path, "wb") as f:
                    f.write(edit(data))
            return corrupt

        def edit_manifest(edit):
            def corrupt(ckpt):
                path = os.path.join(ckpt, "manifest.json")
                manifest = json.load(open(path))
                edit(manifest)
                json.dump(manifest, open(path, "w"))
            return corrupt

        def flip_last(data):
            data[-1] ^= 0x01
            return data

        def flip_first_tensor_byte(data):
            (length,) = struct.unpack("<Q", data[:8])
            data[8 + length] ^= 0x01
            return data

        def flip_metadata(data):
            # "pt" -> "pu": the header stays valid JSON, so only the checksum can tell.
            at = data.index(b'"format":"pt"') + len(b'"format":"p')
            data[at] ^= 0x01
            return data

        def header_dtype(data):
            (length,) = struct.unpack("<Q", data[:8])
            at = data.index(b'"F32"', 8, 8 + length)
            data[at + 1:at + 4] = b"F33"
            return data

        def manifest_of_other(ckpt):
            shutil.copy(os.path.join(other, "manifest.json"), os.path.join(ckpt, "manifest.json"))

        def header_past_end(data):
            data[0:8] = (len(data) + 100).to_bytes(8, "little")
            return data

        def overlap(manifest):
            pieces = manifest["tensors"][0]["pieces"]
            pieces[1]["begin"] -= 1

        def bad_dtype(manifest):
            manifest["tensors"][0]["dtype"] = "F33"

        case("truncated", edit_file(rank1, lambda d: d[:-10]), r"^error: .*rank-00001.*(truncat|bytes)")
        case("header_past_end", edit_file(rank1, header_past_end), r"^error: .*rank-00001.*header")
        case("overlapping_ranges", edit_manifest(overlap), r"^error: .*overlapping pieces")
        case("wrong_dtype", edit_manifest(bad_dtype), r"^error: .*unknown dtype 'F33'")
        case("flipped_byte", edit_file(rank1, flip_last), r"^error: .*fails its checksum")
        # The converter verifies checksums from its own reads, so a byte it reads first, and one it
        # never copies (the header), are both found before anything is committed.
        case("flipped_first_byte", edit_file("rank-00000-of-00002.safetensors",
                                             flip_first_tensor_byte),
             r"^error: .*rank-00000-of-00002.safetensors' fails its checksum")
        case("flipped_header_byte", edit_file(rank1, flip_metadata),
             r"^error: .*rank-00001-of-00002.safetensors' fails its checksum")
        case("header_wrong_dtype", edit_file(rank1, header_dtype),
             r"^error: .*rank-00001-of-00002.safetensors.*F33")
        case("missing_rank_file", lambda c: os.remove(os.path.join(c, rank1)),
             r"^error: .*rank-00001-of-00002.safetensors' is missing")
        case("being_written", lambda c: os.remove(os.path.join(c, "manifest.json")),
             r"^error: .*no manifest.json: it is not a committed checkpoint")
        case("another_graph", lambda c: None, r"^error: checkpoint .* is of another model",
             graph=("mlp_demo_sgd", 2))
        case("manifest_of_another_graph", manifest_of_other,
             r"^error: checkpoint .* is of another model",
             convert_pattern=r"^error: .*rank-0000[01]-of-00002.safetensors' (has \d+ bytes, the "
                             r"manifest says|fails its checksum|does not hold)")
        case("another_layout", lambda c: None,
             r"^error: unbalanced checkpoint .* loads only on the layout it was saved with, and it "
             r"has 1 buckets, the graph 2.*checkpoint-convert .* --to unbalanced --nranks 2 --graph",
             graph=("mlp_demo", "2x2"))
        case("another_global_batch", lambda c: None,
             r"^error: checkpoint .* was trained with a global batch of 8, this run takes 12 "
             r"\(3 rank\(s\) x 4 rows\).*8 rows do not split evenly over 3 ranks",
             graph=("mlp_demo", 3), nranks=3)
        run([convert, good, os.path.join(tmp, "sgd.out"), "--to", "unbalanced", "--graph",
             graphs["mlp_demo_sgd", 2]], 2, r"^error: --graph trains another model")
        assert not [f for f in os.listdir(tmp) if f.startswith("sgd.out")]
        print("--graph of another model: refused")
        existing = os.path.join(tmp, "existing")
        os.mkdir(existing)
        run([convert, good, existing, "--to", "balanced"], 2, r"^error: OUT .* already exists")
        assert os.listdir(existing) == []
        print("OUT existing: refused")


if __name__ == "__main__":
    main()
