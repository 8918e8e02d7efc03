#!/usr/bin/env python3
"""The GPT end to end: the committed forward graph (models/gpt_tiny.forward.onnx) made a training
graph by rewrite-graph --train, rewritten for 2 and 4 ranks, trained under mpirun on the committed
token data (global batch 8, a cosine schedule with warmup, so the rate depends on the step).

usage: check_gpt_training.py BUILD_DIR OUT_DIR CHECK MPIEXEC [MPI_PREFLAGS...]
CHECK:
  prepare           the training graph (its 36 trained parameters) and its rewrites for 2 ranks with
                    and without --overlap and for 4 ranks with --overlap, into OUT_DIR
  overlap           2 ranks, 10 steps with and without --overlap: losses bit for bit equal, and
                    falling (the last below the first by 0.2)
  resume-unbalanced save at step 3 of 8 (--save-format unbalanced), resume from it: steps 4-7
  resume-balanced   bit for bit the uninterrupted run's (the seed protocol), likewise balanced
  rank-change       a balanced checkpoint saved by 2 ranks at step 3 resumes on 4 (the graph
                    rewritten for 4): its steps 4-7 equal bit for bit those of 4 ranks resumed from
                    the same state converted to the 4-rank layout (checkpoint-convert --to
                    unbalanced --nranks 4), and the 2-rank continuation's within 1e-4 relative
                    (same global batch; only the order of the sums differs)
Prints "OK: ..." and exits 0, or says what differs and exits 1.
"""
import os
import re
import subprocess
import sys

GLOBAL_BATCH, STEPS, SAVED_STEP = 8, 8, 3
SCHEDULE = ["--lr", "0.01", "--lr-schedule", "cosine", "--warmup-steps", "2"]


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def losses(path, first_step=0):
    """The loss bits of each step from first_step on, by step."""
    with open(path) as log:
        rows = [line.split() for line in log if not line.startswith("#")]
    return {int(row[0]): row[3] for row in rows if int(row[0]) >= first_step}


def values(path, first_step=0):
    with open(path) as log:
        rows = [line.split() for line in log if not line.startswith("#")]
    return {int(row[0]): float(row[1]) for row in rows if int(row[0]) >= first_step}


def main():
    build, out, check, mpiexec, *preflags = sys.argv[1:]
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    apps = os.path.join(build, "apps")
    data = os.path.join(source, "models", "gpt_tiny_data.safetensors")
    path = lambda name: os.path.join(out, name)  # noqa: E731

    def train(ranks, graph, log, *extra, steps=STEPS):
        return run([mpiexec, "-np", str(ranks), *preflags, os.path.join(apps, "graph-exec"),
                    path(graph), "--data", data, "--steps", str(steps), "--batch",
                    str(GLOBAL_BATCH), "--device", "cpu", "--no-progress", "--loss-log", path(log),
                    *SCHEDULE, *extra])

    def fresh(name):
        run(["rm", "-rf", path(name)])
        return path(name)

    if check == "prepare":
        os.makedirs(out, exist_ok=True)
        rewrite = os.path.join(apps, "rewrite-graph")
        report = run([rewrite, os.path.join(source, "models", "gpt_tiny.forward.onnx"), "-o",
                      path("train.onnx"), "--train", "--loss", "cross-entropy", "--loss-on",
                      "logits", "--label", "labels", "--report"])
        trained = re.search(r"trained parameters: (\d+)", report)
        if not trained or trained[1] != "36":
            sys.exit(f"FAIL: expected the 36 parameters trained, the report says:\n{report}")
        for name, flags in (("n2.overlap", ["--nranks", "2", "--overlap"]),
                            ("n2.plain", ["--nranks", "2"]),
                            ("n4.overlap", ["--nranks", "4", "--overlap"])):
            run([rewrite, path("train.onnx"), "-o", path(name + ".onnx"), *flags])
        print("OK: training graph with 36 parameters, rewritten for 2 and 4 ranks")

    elif check == "overlap":
        train(2, "n2.overlap.onnx", "overlap.log", steps=10)
        train(2, "n2.plain.onnx", "plain.log", steps=10)
        with_overlap, without = losses(path("overlap.log")), losses(path("plain.log"))
        if len(with_overlap) != 10 or with_overlap != without:
            sys.exit(f"FAIL: losses with --overlap {with_overlap}\n  without {without}")
        loss = values(path("overlap.log"))
        if not loss[9] < loss[0] - 0.2:
            sys.exit(f"FAIL: the loss did not fall in 10 steps: {loss}")
        print(f"OK: 10 steps with and without --overlap bit-identical, loss {loss[0]:.3f} -> "
              f"{loss[9]:.3f}")

    elif check.startswith("resume-"):
        kind = check[len("resume-"):]
        ckpt = fresh(f"ckpt.{kind}")
        train(2, "n2.overlap.onnx", f"{kind}.full.log", "--save", ckpt, "--save-every",
              str(SAVED_STEP + 1), "--save-format", kind)
        saved = os.path.join(ckpt, f"step-{SAVED_STEP:06d}")
        output = train(2, "n2.overlap.onnx", f"{kind}.resumed.log", "--load", saved)
        if f"at step {SAVED_STEP + 1}" not in output:
            sys.exit(f"FAIL: not resumed at step {SAVED_STEP + 1}:\n{output}")
        full = losses(path(f"{kind}.full.log"), SAVED_STEP + 1)
        resumed = losses(path(f"{kind}.resumed.log"))
        if len(full) != STEPS - SAVED_STEP - 1 or resumed != full:
            sys.exit(f"FAIL: resumed {resumed}\n  uninterrupted {full}")
        print(f"OK: resumed from a {kind} checkpoint of step {SAVED_STEP}, steps "
              f"{SAVED_STEP + 1}-{STEPS - 1} bit-identical to the uninterrupted run")

    elif check == "rank-change":
        ckpt = fresh("ckpt.rank_change")
        train(2, "n2.overlap.onnx", "n2.full.log", "--save", ckpt, "--save-every",
              str(SAVED_STEP + 1), "--save-format", "balanced")
        saved = os.path.join(ckpt, f"step-{SAVED_STEP:06d}")
        train(4, "n4.overlap.onnx", "n4.from_balanced.log", "--load", saved)
        converted = fresh("ckpt.n4")
        run([os.path.join(apps, "checkpoint-convert"), saved, converted, "--to", "unbalanced",
             "--nranks", "4", "--graph", path("n4.overlap.onnx")])
        train(4, "n4.overlap.onnx", "n4.from_converted.log", "--load", converted)
        on4 = losses(path("n4.from_balanced.log"))
        if len(on4) != STEPS - SAVED_STEP - 1 or on4 != losses(path("n4.from_converted.log")):
            sys.exit(f"FAIL: 4 ranks from the balanced checkpoint {on4}\n  from the converted "
                     f"one {losses(path('n4.from_converted.log'))}")
        on2 = values(path("n2.full.log"), SAVED_STEP + 1)
        for step, loss in values(path("n4.from_balanced.log")).items():
            if abs(loss - on2[step]) > 1e-4 * abs(on2[step]):
                sys.exit(f"FAIL: step {step} on 4 ranks {loss}, on 2 ranks {on2[step]}")
        print(f"OK: a balanced checkpoint of 2 ranks resumed on 4: steps {SAVED_STEP + 1}-"
              f"{STEPS - 1} as from its 4-rank conversion bit for bit, and as on 2 ranks within "
              "1e-4")

    else:
        sys.exit(f"unknown check '{check}'")


if __name__ == "__main__":
    main()
