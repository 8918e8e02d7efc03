#!/usr/bin/env python3
"""Crash safety: a rank killed with SIGKILL at a random moment while training saves a checkpoint
after every step leaves either the previous checkpoint or the new one, never a half one that
loads. After each killed run, the folder's latest checkpoint resumes training (exit 0), every
checkpoint folder in it is complete, and with none committed yet --load refuses cleanly (exit 2).

usage: check_crash_safety.py BUILD_DIR RUNS MPIEXEC [MPI_PREFLAGS...]
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time


def run(cmd, expect=0):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if result.returncode != expect:
        sys.exit(f"expected exit {expect}, got {result.returncode}: {' '.join(cmd)}\n"
                 f"{result.stdout}\n{result.stderr}")
    return result


def main():
    build, runs, mpiexec, *preflags = sys.argv[1:]
    apps = os.path.join(build, "apps")
    rng = random.Random(20261130)
    with tempfile.TemporaryDirectory() as tmp:
        # mlp_wide makes each save write about 50 MB per rank, so kills land inside saves too.
        run([os.path.join(build, "models", "generate-models"), "--model", "mlp_wide", "--batch", "2",
             "--samples", "64", "--out-dir", tmp])
        graph = os.path.join(tmp, "wide.2ranks.onnx")
        run([os.path.join(apps, "rewrite-graph"), os.path.join(tmp, "mlp_wide.onnx"), "-o", graph,
             "--nranks", "2", "--overlap"])
        data = os.path.join(tmp, "mlp_wide_data.safetensors")
        launch = [mpiexec, "-np", "2", *preflags, os.path.join(apps, "graph-exec"), graph,
                  "--data", data, "--lr", "0.0001"]
        resumed = refused = 0
        for attempt in range(int(runs)):
            folder = os.path.join(tmp, f"ckpt{attempt}")
            job = subprocess.Popen(launch + ["--steps", "1000", "--save", folder, "--save-every", "1"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
            time.sleep(rng.uniform(0.5, 3.0))
            ranks = subprocess.run(["pgrep", "-f", f"graph-exec {graph}"], capture_output=True,
                                   text=True).stdout.split()
            ranks = [pid for pid in ranks if int(pid) != job.pid]
            if ranks:
                os.kill(int(rng.choice(ranks)), signal.SIGKILL)
            try:
                job.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(job.pid, signal.SIGKILL)
                sys.exit(f"run {attempt}: the surviving rank hung after its peer was killed")
            entries = os.listdir(folder) if os.path.isdir(folder) else []
            for entry in entries:
                path = os.path.join(folder, entry)
                if entry.startswith("step-") and not os.path.exists(os.path.join(path, "manifest.json")):
                    sys.exit(f"run {attempt}: {path} looks committed but has no manifest")
            if "latest" in entries:
                saved = open(os.path.join(folder, "latest")).read().split()[0]
                step = int(saved.split("-")[-1])
                run(launch + ["--steps", str(step + 3), "--load", folder])
                resumed += 1
            else:
                run(launch + ["--steps", "3", "--load", folder], expect=2)
                refused += 1
            print(f"run {attempt}: killed a rank; "
                  f"{'resumed from ' + saved if 'latest' in entries else 'nothing committed, refused'}")
        print(f"{resumed} resumed, {refused} refused cleanly")


if __name__ == "__main__":
    main()
