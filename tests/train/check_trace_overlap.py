#!/usr/bin/env python3
"""Overlap is real: in the Chrome trace of a 2-rank run of mlp_wide rewritten with --overlap, each
rank has a reduce-scatter during which a backward node started on the compute lane.

The bucket limit is small (several buckets), so the reduce-scatter of the first bucket is issued
while most of backward is still to run; the backward nodes come from the rewritten graph's
`__op_role` (1), so the bucket's own optimizer update, which must wait for its reduce-scatter,
never counts. On a loaded machine one run may, by scheduling, start no backward node inside any
reduce-scatter; the run is retried up to 3 times before the test fails.

usage: check_trace_overlap.py BUILD_DIR MPIEXEC [MPI_PREFLAGS...]
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx

RANKS = 2
BATCH_PER_RANK = 8
STEPS = 4
COMM_BUFFER_MB = 8  # mlp_wide's 8 layers of 4 MiB fill 5 buckets
ATTEMPTS = 3
COMPUTE_LANE = "default"
COMM_LANE = "auto_parallel_sharding"
BACKWARD = 1  # OpRole::kBackward; bit 256 marks the loss


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def node_roles(graph_path):
    """Node name -> __op_role in the rewritten graph."""
    model = onnx.load(graph_path)
    roles = {}
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.name == "__op_role":
                roles[node.name] = attr.i
    return roles


def check_lanes(trace):
    """Asserts the trace's structure; returns {rank: {lane name: [complete events]}}."""
    assert isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), \
        "trace has no traceEvents list"
    names = {}
    processes = set()
    for event in trace["traceEvents"]:
        if event.get("ph") == "M" and event.get("name") == "process_name":
            processes.add(event["pid"])
        if event.get("ph") == "M" and event.get("name") == "thread_name":
            names[(event["pid"], event["tid"])] = event["args"]["name"]
    assert processes == set(range(RANKS)), \
        f"process lanes {sorted(processes)}, want ranks 0..{RANKS - 1}"
    lanes = {rank: {} for rank in range(RANKS)}
    for event in trace["traceEvents"]:
        if event.get("ph") != "X":
            continue
        key = (event["pid"], event["tid"])
        assert key in names, \
            f"event {event['name']} on pid {key[0]} tid {key[1]}, a lane without a name"
        lanes[event["pid"]].setdefault(names[key], []).append(event)
    for rank in range(RANKS):
        for lane in (COMPUTE_LANE, COMM_LANE):
            assert lanes[rank].get(lane), \
                f"rank {rank} has no '{lane}' lane (lanes: {sorted(lanes[rank])})"
    return lanes


def overlaps(lanes, roles):
    """Per rank, the (reduce-scatter, backward node) pairs where the backward node started on the
    compute lane while the reduce-scatter ran."""
    found = {}
    for rank, by_lane in lanes.items():
        scatters = [e for e in by_lane[COMM_LANE] if e.get("cat") == "ReduceScatter"]
        assert scatters, f"rank {rank}: no ReduceScatter event on '{COMM_LANE}'"
        backward = [e for e in by_lane[COMPUTE_LANE] if roles.get(e["name"], -1) & 0xFF == BACKWARD]
        assert backward, f"rank {rank}: no backward node on '{COMPUTE_LANE}'"
        found[rank] = [(rs, op) for rs in scatters for op in backward
                       if op["args"]["step"] == rs["args"]["step"]
                       and rs["ts"] <= op["ts"] < rs["ts"] + rs["dur"]]
    return found


def main():
    build, mpiexec, *preflags = sys.argv[1:]
    apps = os.path.join(build, "apps")
    with tempfile.TemporaryDirectory() as tmp:
        run([os.path.join(build, "models", "generate-models"), "--model", "mlp_wide", "--batch",
             str(BATCH_PER_RANK), "--samples", str(RANKS * BATCH_PER_RANK * STEPS),
             "--out-dir", tmp])
        graph = os.path.join(tmp, "mlp_wide.onnx")
        data = os.path.join(tmp, "mlp_wide_data.safetensors")
        rewritten = os.path.join(tmp, "mlp_wide.n2.overlap.onnx")
        run([os.path.join(apps, "rewrite-graph"), graph, "-o", rewritten, "--nranks", str(RANKS),
             "--overlap", "--comm-buffer-mb", str(COMM_BUFFER_MB)])
        roles = node_roles(rewritten)
        trace_path = os.path.join(tmp, "trace.json")
        for attempt in range(1, ATTEMPTS + 1):
            run([mpiexec, "-np", str(RANKS), *preflags, os.path.join(apps, "graph-exec"), rewritten,
                 "--data", data, "--steps", str(STEPS), "--batch", str(RANKS * BATCH_PER_RANK),
                 "--trace", trace_path])
            with open(trace_path) as f:
                trace = json.load(f)
            found = overlaps(check_lanes(trace), roles)
            missing = [rank for rank, pairs in found.items() if not pairs]
            if not missing:
                for rank, pairs in sorted(found.items()):
                    rs, op = pairs[0]
                    print(f"rank {rank}: {len(pairs)} backward nodes started during a "
                          f"reduce-scatter, "
                          f"e.g. {op['name']} at +{op['ts'] - rs['ts']:.0f} us into "
                          f"{rs['name']} ({rs['dur']:.0f} us), step {rs['args']['step']}")
                return
            print(f"attempt {attempt}: ranks {missing} started no backward node during a "
                  f"reduce-scatter")
        sys.exit(f"FAILED: after {ATTEMPTS} runs, ranks {missing} never ran backward compute "
                 f"while a reduce-scatter ran: communication did not overlap compute")


if __name__ == "__main__":
    main()
