#!/usr/bin/env python3
"""Step time of mlp_wide with and without the overlap pass, and with communication removed.

Three variants at the same rows per rank, run alternating, several repetitions each:
  overlap      2 ranks, rewritten with --overlap (reduce-scatters on their own stream)
  no overlap   2 ranks, rewritten without it (every collective on the compute stream, in turn)
  1 rank       the unrewritten graph, no mpirun: no communication at all
Each run prints one line per step ("step K  loss ...  time X ms"); the first SKIP steps of every run
(planning, first touch of buffers, MPI connection set-up) are dropped. Then one traced overlap run
gives, per rank, the share of reduce-scatter time during which backward compute ran on the
compute lane. Prints Markdown on stdout, progress on stderr.

usage: overlap_bench.py --build BUILD [--batch B] [--steps K] [--reps R] [--comm-buffer-mb MB]
                        [--mpiexec 'mpirun --allow-run-as-root --oversubscribe']
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

import onnx

RANKS = 2
SKIP = 2
STEP_LINE = re.compile(r"^step (\d+)\s+loss \S+\s+lr \S+\s+time ([0-9.]+) ms$")
COMPUTE_LANE = "default"
COMM_LANE = "auto_parallel_sharding"
BACKWARD = 1  # OpRole::kBackward; bit 256 marks the loss


def log(message):
    print(message, file=sys.stderr, flush=True)


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def step_times(output):
    """Milliseconds of every step after the first SKIP."""
    times = []
    for line in output.splitlines():
        match = STEP_LINE.match(line.strip())
        if match and int(match.group(1)) >= SKIP:
            times.append(float(match.group(2)))
    return times


def union(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def covered(interval, merged):
    """Length of `interval` covered by the disjoint sorted intervals `merged`."""
    start, end = interval
    return sum(max(0.0, min(end, b) - max(start, a)) for a, b in merged)


def trace_overlap(trace_path, graph_path):
    """Per rank: (reduce-scatter ms per step, share overlapped by backward compute, share
    overlapped by any compute), over the steps after the first SKIP."""
    roles = {}
    for node in onnx.load(graph_path).graph.node:
        for attr in node.attribute:
            if attr.name == "__op_role":
                roles[node.name] = attr.i
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    results = {}
    for rank in range(RANKS):
        # The trace's step argument counts runs from 1.
        mine = [e for e in events if e.get("ph") == "X" and e["pid"] == rank
                and e["args"]["step"] > SKIP]
        lane = lambda e: lanes[(e["pid"], e["tid"])]
        scatters = [(e["ts"], e["ts"] + e["dur"]) for e in mine
                    if lane(e) == COMM_LANE and e["cat"] == "ReduceScatter"]
        compute = [e for e in mine if lane(e) == COMPUTE_LANE]
        backward = union([(e["ts"], e["ts"] + e["dur"]) for e in compute
                          if roles.get(e["name"], -1) & 0xFF == BACKWARD])
        anything = union([(e["ts"], e["ts"] + e["dur"]) for e in compute])
        total = sum(end - start for start, end in scatters)
        steps = len({e["args"]["step"] for e in mine})
        results[rank] = (total / 1e3 / max(steps, 1),
                         sum(covered(s, backward) for s in scatters) / total if total else 0.0,
                         sum(covered(s, anything) for s in scatters) / total if total else 0.0)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="build folder with apps/ and models/")
    parser.add_argument("--batch", type=int, default=16, help="rows per rank")
    parser.add_argument("--steps", type=int, default=10, help="steps per run (first 2 dropped)")
    parser.add_argument("--reps", type=int, default=3, help="runs of each variant")
    parser.add_argument("--comm-buffer-mb", type=float, default=8, help="bucket limit")
    parser.add_argument("--mpiexec", default="mpirun --allow-run-as-root --oversubscribe")
    parser.add_argument("--work-dir", help="where the graphs go (default: a temporary folder)")
    args = parser.parse_args()
    apps = os.path.join(args.build, "apps")
    graph_exec = os.path.join(apps, "graph-exec")
    mpiexec = shlex.split(args.mpiexec)

    with tempfile.TemporaryDirectory(dir=args.work_dir) as tmp:
        log(f"overlap-bench: generating mlp_wide, batch {args.batch} per rank, in {tmp}")
        run([os.path.join(args.build, "models", "generate-models"), "--model", "mlp_wide",
             "--batch", str(args.batch), "--samples", str(RANKS * args.batch * 4), "--out-dir", tmp])
        graph = os.path.join(tmp, "mlp_wide.onnx")
        data = os.path.join(tmp, "mlp_wide_data.safetensors")
        rewritten = {}
        for overlap in (True, False):
            rewritten[overlap] = os.path.join(tmp, f"mlp_wide.n2{'.overlap' if overlap else ''}.onnx")
            run([os.path.join(apps, "rewrite-graph"), graph, "-o", rewritten[overlap], "--nranks",
                 str(RANKS), "--comm-buffer-mb", str(args.comm_buffer_mb)]
                + (["--overlap"] if overlap else []))
        common = ["--data", data, "--steps", str(args.steps), "--lr", "0.0001"]
        multi = ["--batch", str(RANKS * args.batch)]
        variants = [
            ("2 ranks, --overlap", [*mpiexec, "-np", str(RANKS), graph_exec, rewritten[True],
                                    *common, *multi]),
            ("2 ranks, no overlap", [*mpiexec, "-np", str(RANKS), graph_exec, rewritten[False],
                                     *common, *multi]),
            ("1 rank, unrewritten (no communication)", [graph_exec, graph, *common]),
        ]
        times = {name: [] for name, _ in variants}
        rep_medians = {name: [] for name, _ in variants}
        for rep in range(args.reps):
            for name, cmd in variants:
                log(f"overlap-bench: rep {rep + 1}/{args.reps}: {name}")
                t = step_times(run(cmd))
                if not t:
                    sys.exit(f"FAILED: no step lines from {' '.join(cmd)}")
                times[name] += t
                rep_medians[name].append(statistics.median(t))

        log("overlap-bench: one traced --overlap run")
        trace = os.path.join(tmp, "trace.json")
        run([*variants[0][1], "--trace", trace])
        shares = trace_overlap(trace, rewritten[True])

    relative_to = statistics.median(times[variants[2][0]])
    print(f"mlp_wide (8 x 1024 x 1024 with bias, AdamW), {args.batch} rows per rank, bucket limit "
          f"{args.comm_buffer_mb:g} MiB, {args.reps} alternating runs of each variant x "
          f"{args.steps} steps, the first {SKIP} steps of every run dropped. Step time as "
          f"graph-exec prints it (inputs, the step, the loss all-reduce).\n")
    print("| variant | steps timed | median step ms | per-run medians ms | vs 1 rank |")
    print("|---|---:|---:|---|---:|")
    for name, _ in variants:
        median = statistics.median(times[name])
        runs = ", ".join(f"{m:.1f}" for m in rep_medians[name])
        print(f"| {name} | {len(times[name])} | **{median:.1f}** | {runs} | "
              f"{median / relative_to:.2f}x |")
    print()
    print("Traced --overlap run (same settings), steps after the first "
          f"{SKIP}: reduce-scatter time on the `{COMM_LANE}` lane and the share of it during which "
          f"the `{COMPUTE_LANE}` lane ran backward nodes (any node).\n")
    print("| rank | reduce-scatter ms per step | overlapped by backward | by any compute |")
    print("|---:|---:|---:|---:|")
    for rank, (ms, backward, anything) in sorted(shares.items()):
        print(f"| {rank} | {ms:.1f} | {backward:.0%} | {anything:.0%} |")


if __name__ == "__main__":
    main()
