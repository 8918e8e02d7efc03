#!/usr/bin/env python3
"""Step time of mlp_wide with and without the overlap pass, and with communication removed.

Variants at the same rows per rank, run alternating, several repetitions each:
  overlap      2 ranks, rewritten with --overlap (reduce-scatters on their own stream)
  no overlap   2 ranks, rewritten without it (every collective on the compute stream, in turn)
  1 rank       the unrewritten graph under `mpirun -np 1`, which binds it to one core as it binds
               each of the 2 ranks: the same forward and backward per rank, the whole optimizer
               update instead of half of it, and no communication
  overlap, yield   the overlap run again with OpenMPI's mpi_yield_when_idle, which makes a rank
               waiting in a collective call sched_yield instead of spinning: shows how much of the
               overlap run's cost is the waiting thread competing with compute for the core
Each run prints one line per step ("step K  loss ...  time X ms"); the first SKIP steps of every run
(planning, first touch of buffers, MPI connection set-up) are dropped. Then one traced run of each
2-rank variant gives, per rank, the time in compute kernels and in reduce-scatters, and for
--overlap the share of reduce-scatter time during which backward compute ran on the compute lane.
Prints Markdown on stdout, progress on stderr.

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


COLLECTIVES = {"ReduceScatter", "AllGather", "AllReduce"}


def trace_summary(trace_path, graph_path):
    """Per rank, over the steps after the first SKIP: (compute ms per step without the
    collectives, reduce-scatter ms per step, share of reduce-scatter time during which the compute
    lane ran backward nodes, the same for any compute-lane node)."""
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
        compute = [e for e in mine if lane(e) == COMPUTE_LANE and e["cat"] not in COLLECTIVES]
        all_scatters = [e["dur"] for e in mine if e["cat"] == "ReduceScatter"]
        backward = union([(e["ts"], e["ts"] + e["dur"]) for e in compute
                          if roles.get(e["name"], -1) & 0xFF == BACKWARD])
        anything = union([(e["ts"], e["ts"] + e["dur"]) for e in compute])
        total = sum(end - start for start, end in scatters)
        steps = max(len({e["args"]["step"] for e in mine}), 1)
        results[rank] = (sum(e["dur"] for e in compute) / 1e3 / steps,
                         sum(all_scatters) / 1e3 / steps,
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
             "--batch", str(args.batch), "--samples", str(RANKS * args.batch * 4),
             "--out-dir", tmp])
        graph = os.path.join(tmp, "mlp_wide.onnx")
        data = os.path.join(tmp, "mlp_wide_data.safetensors")
        rewritten = {}
        for overlap in (True, False):
            suffix = ".overlap" if overlap else ""
            rewritten[overlap] = os.path.join(tmp, f"mlp_wide.n2{suffix}.onnx")
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
            ("1 rank, unrewritten (no communication)", [*mpiexec, "-np", "1", graph_exec, graph,
                                                        *common]),
            ("2 ranks, --overlap, mpi_yield_when_idle", [
                *mpiexec, "--mca", "mpi_yield_when_idle", "1", "-np", str(RANKS), graph_exec,
                rewritten[True], *common, *multi]),
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

        summaries = {}
        for overlap, (name, cmd) in ((True, variants[0]), (False, variants[1])):
            log(f"overlap-bench: one traced run: {name}")
            trace = os.path.join(tmp, "trace.json")
            run([*cmd, "--trace", trace])
            summaries[name] = trace_summary(trace, rewritten[overlap])

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
    print("Commands (GRAPH = mlp_wide.onnx, N2 / N2_OVERLAP = it rewritten for 2 ranks without / "
          "with --overlap, DATA = its dataset):\n")
    shown = {graph: "GRAPH", rewritten[False]: "N2", rewritten[True]: "N2_OVERLAP", data: "DATA",
             graph_exec: "graph-exec"}
    for name, cmd in variants:
        print(f"- {name}: `{' '.join(shown.get(part, part) for part in cmd)}`")
    print()
    print(f"One traced run of each 2-rank variant (same settings, steps after the first {SKIP}): "
          f"time in compute kernels on the `{COMPUTE_LANE}` lane (collectives excluded), time in "
          f"reduce-scatters (from entering the collective, so waiting for the other rank counts), "
          f"and for --overlap the share of reduce-scatter time during which the `{COMPUTE_LANE}` "
          f"lane ran backward nodes (any node).\n")
    print("| run | rank | compute ms per step | reduce-scatter ms per step | RS overlapped by "
          "backward | by any compute |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, summary in summaries.items():
        overlapped = name == variants[0][0]
        for rank, (compute, scatter, backward, anything) in sorted(summary.items()):
            shares = f"{backward:.0%} | {anything:.0%}" if overlapped else "- | -"
            print(f"| {name} | {rank} | {compute:.1f} | {scatter:.1f} | {shares} |")
    with_overlap = statistics.median(times[variants[0][0]])
    without = statistics.median(times[variants[1][0]])
    compute = {name: statistics.mean(v[0] for v in summary.values())
               for name, summary in summaries.items()}
    print()
    print(f"In this run, on {os.cpu_count()} cores for {RANKS} ranks: --overlap takes "
          f"{with_overlap / without:.2f}x the step time of no overlap "
          f"({'slower' if with_overlap > without else 'faster'}), and compute kernels take "
          f"{compute[variants[0][0]]:.1f} ms per step with it against "
          f"{compute[variants[1][0]]:.1f} ms without (mean of the ranks); without overlap a step "
          f"takes {without / relative_to:.2f}x the one-rank step.")


if __name__ == "__main__":
    main()
