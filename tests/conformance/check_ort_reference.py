#!/usr/bin/python3
"""Runs one step of an ONNX Runtime training graph through `graph-exec --run-once` and checks it.

usage: check_ort_reference.py GRAPH_EXEC REFERENCE_DIR WORK_DIR

REFERENCE_DIR is one of tests/data/ort_reference/*: ORT's `artifacts/training_model.onnx`
(forward + backward, parameters as graph inputs, gradients accumulated into buffers), the
forward model whose initializers are the initial parameters, the data set and ORT's losses.

The step is the first of ORT's own run: parameters at their initial values, the first batch
(samples 0..batch-1), zeroed accumulation buffers and lazy_reset_grad set. Checks:
  1. every node has a kernel and the graph runs (graph-exec exits 0);
  2. the loss equals ORT's step-0 loss within 1e-5 relative (fp32, a different summation order);
  3. the backward is right: for a few elements of several parameters, the gradient (exposed as a
     graph output of a copy of the model) matches central differences of the loss computed by the
     same graph (fp32, so the step is
     large and the tolerance loose: 2e-3 absolute + 5% relative).
Exits 0 when all hold, 1 otherwise, printing what differs.
"""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

SAFETENSORS_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=SAFETENSORS_DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


class Step:
    """The training graph, its inputs for ORT's first step, and a way to run it."""

    def __init__(self, graph_exec, ref_dir, work_dir):
        self.graph_exec = graph_exec
        self.work_dir = work_dir
        self.reference = json.load(open(os.path.join(ref_dir, "reference.json")))
        model = onnx.load(os.path.join(ref_dir, "artifacts", "training_model.onnx"))
        # Each gradient reaches its accumulation buffer, a graph input, in place
        # (InPlaceAccumulatorV2; the node's output is only a flag): expose the gradient itself as
        # a graph output "<param>_grad", so the check can read it.
        self.gradients = {}
        for node in model.graph.node:
            if node.domain == "com.microsoft" and node.op_type == "InPlaceAccumulatorV2":
                buffer = node.input[0]
                param = buffer[: -len("_grad.accumulation.buffer")]
                self.gradients[param] = node.input[1]
                model.graph.output.append(onnx.ValueInfoProto(name=node.input[1]))
        self.model_path = os.path.join(work_dir, "training_model.onnx")
        os.makedirs(work_dir, exist_ok=True)
        onnx.save(model, self.model_path)
        initializers = {i.name for i in model.graph.initializer}
        self.inputs = [i for i in model.graph.input if i.name not in initializers]
        self.outputs = [o.name for o in model.graph.output]
        forward = onnx.load(os.path.join(ref_dir, "forward.onnx"))
        self.params = {i.name: numpy_helper.to_array(i) for i in forward.graph.initializer}
        data = read_safetensors(os.path.join(ref_dir, "data.safetensors"))
        batch = self.reference["settings"]["batch"]
        label = self.reference["ort_label_input"]
        self.feeds = {}
        for name in self.reference["data_inputs"]:
            self.feeds[name] = data[name][:batch]
        self.feeds[label] = data[self.reference["label"]][:batch]
        self.runs = 0

    def values(self, params):
        """The graph's inputs, in order, for parameters `params`."""
        values = []
        for value in self.inputs:
            name = value.name
            if name in self.feeds:
                values.append(self.feeds[name])
            elif name in params:
                values.append(params[name])
            elif name.endswith("_grad.accumulation.buffer"):
                values.append(np.zeros_like(params[name[: -len("_grad.accumulation.buffer")]]))
            elif name == "lazy_reset_grad":
                values.append(np.array(True))
            else:
                raise SystemExit(f"{self.model_path}: no value for graph input '{name}'")
        return values

    def run(self, params):
        """Runs the graph once; returns its outputs by name."""
        self.runs += 1
        in_dir = os.path.join(self.work_dir, f"in{self.runs}")
        out_dir = os.path.join(self.work_dir, f"out{self.runs}")
        os.makedirs(in_dir, exist_ok=True)
        for n, (value, array) in enumerate(zip(self.inputs, self.values(params))):
            tensor = numpy_helper.from_array(np.asarray(array), value.name)
            with open(os.path.join(in_dir, f"input_{n}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())
        command = [self.graph_exec, "--device", "cpu", "--run-once", self.model_path,
                   "--input-dir", in_dir, "--output-dir", out_dir]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"graph-exec exited {result.returncode}:\n{result.stderr}")
        outputs = {}
        for n, name in enumerate(self.outputs):
            tensor = onnx.TensorProto()
            with open(os.path.join(out_dir, f"output_{n}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            outputs[name] = numpy_helper.to_array(tensor)
        return outputs


def main():
    graph_exec, ref_dir, work_dir = sys.argv[1:4]
    step = Step(graph_exec, ref_dir, work_dir)
    outputs = step.run(step.params)
    failures = []

    loss = float(outputs[step.outputs[0]])
    expected = step.reference["losses"][0]["loss"]
    print(f"loss {loss:.9g}, ONNX Runtime's {expected:.9g}")
    if not abs(loss - expected) <= 1e-5 * abs(expected):
        failures.append(f"loss {loss!r} differs from ONNX Runtime's {expected!r}")

    # Central differences of the loss for three elements of about six parameters
    rng = np.random.default_rng(0)
    h = 1e-2
    # (and the embeddings, whose gradient is GatherGrad's, the token one tied to the LM head).
    checked = sorted(step.params)[:: max(1, len(step.params) // 6)]
    checked += [name for name in ("wte", "wpe") if name in step.params]
    for name in checked:
        gradient = outputs.get(step.gradients.get(name, ""))
        if gradient is None:
            continue  # a frozen parameter: no gradient output
        for flat in rng.choice(gradient.size, size=min(3, gradient.size), replace=False):
            shifted = {}
            for sign in (1, -1):
                params = dict(step.params)
                changed = params[name].copy()
                changed.flat[flat] += sign * h
                params[name] = changed
                shifted[sign] = float(step.run(params)[step.outputs[0]])
            numeric = (shifted[1] - shifted[-1]) / (2 * h)
            analytic = float(gradient.flat[flat])
            ok = abs(analytic - numeric) <= 2e-3 + 0.05 * abs(numeric)
            print(f"d loss / d {name}[{flat}]: {analytic:.6g}, central difference "
                  f"{numeric:.6g}{'' if ok else '  <- differs'}")
            if not ok:
                failures.append(f"gradient of {name}[{flat}]: {analytic} vs {numeric}")

    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
