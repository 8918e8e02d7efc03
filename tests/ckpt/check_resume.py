#!/usr/bin/env python3
"""Checkpoints resume training exactly.

protocol: the seed's test (seed-spec §4.7) on mlp_demo rewritten for 2 ranks with --overlap: train
  steps 0-9 saving after step 2; restart from that checkpoint; the losses of steps 3-9 are
  bit-identical to the first run. In both formats, with a constant rate and with a linear warmup
  still warming up at the save.
ranks: save balanced on 2 ranks, resume on 1, 3 and 4; save unbalanced on 4, convert to unbalanced
  2 (and to balanced 3) and resume on 2 (and 3): the losses agree with an uninterrupted run on one
  rank within 1e-5 relative. The consolidated output, read with numpy alone, equals the saved parameters.

usage: check_resume.py protocol|ranks BUILD_DIR MPIEXEC [MPI_PREFLAGS...]
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

LR = "0.0001"


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def read_losses(path):
    losses = {}
    with open(path) as log:
        for line in log:
            if line.startswith("#"):
                continue
            step, loss, lr, bits = line.split()
            losses[int(step)] = (float(loss), bits, lr)
    return losses


def read_safetensors(path):
    """A safetensors file with numpy alone: 8-byte length, JSON header, raw little-endian data."""
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64,
              "I32": np.int32}
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end], dtype=dtypes[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


def main():
    mode, build, mpiexec, *preflags = sys.argv[1:]
    apps = os.path.join(build, "apps")
    exe = {name: os.path.join(apps, name) for name in ("graph-exec", "rewrite-graph",
                                                        "checkpoint-convert")}
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def mpi(n, *args):
        return run([mpiexec, "-np", str(n), *preflags, exe["graph-exec"], *args])

    with tempfile.TemporaryDirectory() as tmp:
        if mode == "protocol":
            graph = os.path.join(tmp, "demo.2.onnx")
            data = os.path.join(source, "models", "mlp_demo_data.safetensors")
            run([exe["rewrite-graph"], os.path.join(source, "models", "mlp_demo.onnx"), "-o", graph,
                 "--nranks", "2", "--overlap"])
            for fmt in ("unbalanced", "balanced"):
                for schedule in ([], ["--lr-schedule", "linear-warmup", "--warmup-steps", "6"]):
                    tag = f"{fmt}{'-warmup' if schedule else ''}"
                    ckpt = os.path.join(tmp, f"ckpt-{tag}")
                    first, second = (os.path.join(tmp, f"{tag}.{i}.log") for i in (1, 2))
                    common = [graph, "--data", data, "--steps", "10", *schedule]
                    mpi(2, *common, "--save", ckpt, "--save-every", "3", "--save-format", fmt,
                        "--loss-log", first)
                    out = mpi(2, *common, "--load", os.path.join(ckpt, "step-000002"),
                              "--loss-log", second)
                    assert "resumed from" in out and "at step 3" in out, out
                    a, b = read_losses(first), read_losses(second)
                    assert sorted(b) == list(range(3, 10)), f"{tag}: resumed steps {sorted(b)}"
                    for step in range(3, 10):
                        if a[step][1] != b[step][1] or a[step][2] != b[step][2]:
                            sys.exit(f"{tag}: step {step}: loss {b[step]} after resuming, "
                                     f"{a[step]} uninterrupted; they must be bit-identical")
                    print(f"{tag}: steps 3-9 bit-identical after resuming at step 2")
            return

        # Rank counts change: every graph takes a global batch of 12.
        generate = os.path.join(build, "models", "generate-models")
        graphs = {}

        def graph_for(n):
            if n not in graphs:
                folder = os.path.join(tmp, f"b{12 // n}")
                run([generate, "--model", "mlp_demo", "--batch", str(12 // n), "--samples", "48",
                     "--out-dir", folder])
                plain = os.path.join(folder, "mlp_demo.onnx")
                data = os.path.join(folder, "mlp_demo_data.safetensors")
                if n == 1:
                    graphs[n] = (plain, data)
                else:
                    rewritten = os.path.join(tmp, f"demo.{n}.onnx")
                    run([exe["rewrite-graph"], plain, "-o", rewritten, "--nranks", str(n),
                         "--overlap"])
                    graphs[n] = (rewritten, data)
            return graphs[n]

        def train(n, log, *extra):
            graph, data = graph_for(n)
            return mpi(n, graph, "--data", data, "--steps", "10", "--lr", LR, "--batch", "12",
                       "--loss-log", log, *extra)

        reference_log = os.path.join(tmp, "reference.log")
        train(1, reference_log)
        reference = read_losses(reference_log)

        def check(log, what):
            losses = read_losses(log)
            assert sorted(losses) == list(range(3, 10)), f"{what}: steps {sorted(losses)}"
            for step, (loss, _, _) in losses.items():
                ref = reference[step][0]
                if abs(loss - ref) > 1e-5 * abs(ref):
                    sys.exit(f"{what}, step {step}: loss {loss}, uninterrupted {ref} on one rank")
            print(f"{what}: steps 3-9 agree with an uninterrupted run within 1e-5")

        balanced = os.path.join(tmp, "balanced")
        train(2, os.path.join(tmp, "save2.log"), "--save", balanced, "--save-every", "3",
              "--save-format", "balanced")
        for n in (1, 3, 4):
            log = os.path.join(tmp, f"resume{n}.log")
            train(n, log, "--load", os.path.join(balanced, "step-000002"))
            check(log, f"balanced from 2 ranks, resumed on {n}")

        unbalanced = os.path.join(tmp, "unbalanced4")
        train(4, os.path.join(tmp, "save4.log"), "--save", unbalanced, "--save-every", "3")
        step2 = os.path.join(unbalanced, "step-000002")
        converted = os.path.join(tmp, "unbalanced2")
        run([exe["checkpoint-convert"], step2, converted, "--to", "unbalanced", "--graph",
             graph_for(2)[0]])
        log = os.path.join(tmp, "resume2.log")
        train(2, log, "--load", converted)
        check(log, "unbalanced from 4 ranks, converted to 2, resumed on 2")
        to_balanced = os.path.join(tmp, "balanced3")
        run([exe["checkpoint-convert"], step2, to_balanced, "--to", "balanced", "--nranks", "3"])
        log = os.path.join(tmp, "resume3b.log")
        train(3, log, "--load", to_balanced)
        check(log, "unbalanced from 4 ranks, converted to balanced 3, resumed on 3")

        # Consolidated weights, read with numpy alone, equal the fused buffers the 4 ranks saved.
        consolidated = os.path.join(tmp, "consolidated")
        run([exe["checkpoint-convert"], step2, consolidated, "--to", "consolidated"])
        weights = read_safetensors(os.path.join(consolidated, "model.safetensors"))
        manifest = json.load(open(os.path.join(step2, "manifest.json")))
        (bucket,) = manifest["layout"]["buckets"]
        shards = [read_safetensors(os.path.join(step2, f"rank-{r:05d}-of-00004.safetensors"))
                  for r in range(4)]
        fused = np.concatenate([s[bucket["param_buffer"]] for s in shards])
        for p in bucket["params"]:
            expected = fused[p["offset"]:p["offset"] + p["numel"]].reshape(p["shape"])
            assert weights[p["name"]].shape == tuple(p["shape"]), p["name"]
            assert np.array_equal(weights[p["name"]], expected), p["name"]
        assert sorted(weights) == sorted(p["name"] for p in bucket["params"]), sorted(weights)
        # Above a size limit: several files and a Hugging Face index.
        split = os.path.join(tmp, "consolidated_split")
        run([exe["checkpoint-convert"], step2, split, "--to", "consolidated", "--max-file-bytes",
             "600"])
        index = json.load(open(os.path.join(split, "model.safetensors.index.json")))
        files = sorted(set(index["weight_map"].values()))
        assert len(files) == 2, files
        for name, file in index["weight_map"].items():
            assert np.array_equal(read_safetensors(os.path.join(split, file))[name], weights[name])
        print("consolidated weights equal the saved parameters (numpy reader), split over "
              f"{len(files)} files with an index")


if __name__ == "__main__":
    main()
