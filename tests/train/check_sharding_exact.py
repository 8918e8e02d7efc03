#!/usr/bin/env python3
"""Sharding is exact: training a model rewritten for N ranks gives the losses of the unrewritten
graph on one rank with the same global batch (within 1e-5 relative: only the summation order of
the gradient average differs), and --overlap gives bit-identical losses to no overlap.

usage: check_sharding_exact.py BUILD_DIR MODEL GLOBAL_BATCH STEPS MPIEXEC [MPI_PREFLAGS...] -- N...
"""
import os
import subprocess
import sys
import tempfile

# Adam moves every weight by about the learning rate whatever its gradient, so rounding noise in
# near-zero gradients grows into the loss; a small rate keeps 20 steps of it under 1e-5.
LR = os.environ.get("ZG_TEST_LR", "0.0001")


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def read_losses(path):
    losses = []
    with open(path) as log:
        for line in log:
            if line.startswith("#"):
                continue
            step, loss, lr, bits = line.split()
            losses.append((float(loss), bits))
    return losses


def main():
    args = sys.argv[1:]
    split = args.index("--")
    build, model, global_batch, steps, mpiexec, *preflags = args[:split]
    ranks = [int(n) for n in args[split + 1:]]
    global_batch, steps = int(global_batch), int(steps)
    apps = os.path.join(build, "apps")
    generate = os.path.join(build, "models", "generate-models")
    with tempfile.TemporaryDirectory() as tmp:
        def graph_for(batch):
            folder = os.path.join(tmp, f"b{batch}")
            if not os.path.exists(os.path.join(folder, f"{model}.onnx")):
                run([generate, "--model", model, "--batch", str(batch), "--samples",
                     str(4 * global_batch), "--out-dir", folder])
            return os.path.join(folder, f"{model}.onnx"), os.path.join(folder, f"{model}_data.safetensors")

        graph, data = graph_for(global_batch)
        reference_log = os.path.join(tmp, "reference.log")
        run([os.path.join(apps, "graph-exec"), graph, "--data", data, "--steps", str(steps),
             "--lr", LR, "--loss-log", reference_log])
        reference = read_losses(reference_log)
        assert len(reference) == steps, f"reference logged {len(reference)} steps"
        worst = 0.0
        for n in ranks:
            assert global_batch % n == 0, f"global batch {global_batch} does not split over {n}"
            graph, data = graph_for(global_batch // n)
            logs = {}
            for overlap in (False, True):
                rewritten = os.path.join(tmp, f"{model}.n{n}{'.overlap' if overlap else ''}.onnx")
                run([os.path.join(apps, "rewrite-graph"), graph, "-o", rewritten, "--nranks", str(n)]
                    + (["--overlap"] if overlap else []))
                logs[overlap] = os.path.join(tmp, f"n{n}{overlap}.log")
                run([mpiexec, "-np", str(n), *preflags, os.path.join(apps, "graph-exec"), rewritten,
                     "--data", data, "--steps", str(steps), "--lr", LR, "--batch",
                     str(global_batch), "--loss-log", logs[overlap]])
            plain, overlapped = read_losses(logs[False]), read_losses(logs[True])
            assert len(plain) == steps and len(overlapped) == steps
            for step, ((ref, _), (loss, bits), (loss_overlap, bits_overlap)) in enumerate(
                    zip(reference, plain, overlapped)):
                relative = abs(loss - ref) / max(abs(ref), 1e-30)
                worst = max(worst, relative)
                if relative > 1e-5:
                    sys.exit(f"{model} on {n} ranks, step {step}: loss {loss} vs {ref} on one rank "
                             f"(relative {relative:.3g} > 1e-5)")
                if bits != bits_overlap:
                    sys.exit(f"{model} on {n} ranks, step {step}: --overlap gives {bits_overlap}, "
                             f"no overlap {bits}; they must be bit-identical")
            print(f"{model}: {n} ranks match one rank over {steps} steps "
                  f"(overlap bit-identical)")
        print(f"{model}: worst relative difference {worst:.3g}")


if __name__ == "__main__":
    main()
