#!/usr/bin/env python3
"""Mixed precision end to end: bf16 with fp32 master weights and master gradients, fp16 with
dynamic loss scaling, and gradient clipping by global norm, through the programs under mpirun.

usage: check_mixed_precision.py BUILD_DIR CHECK MPIEXEC [MPI_PREFLAGS...]
CHECK:
  protocol    the seed's protocol in AMP bf16 (mlp_demo_bf16_o1 and _o2, rewritten for 2 ranks with
              --overlap --master-weights --master-grads): train steps 0-9 saving after step 2,
              resume there; steps 3-9 bit-identical, in both formats. O2's consolidated weights:
              --weights master is the fp32 master copy the balanced checkpoint holds, --weights
              params is the bf16 parameters, which are that copy rounded to bf16 (O1's parameters
              are fp32 and have no master copy). A balanced
              checkpoint of 2 ranks resumes on 4 (rewritten likewise) within BF16_RANKS_RTOL.
  ranks       mlp_demo_bf16_o2 with master weights and gradients on 1, 2 and 4 ranks, global batch
              12, 10 steps: every loss within BF16_RANKS_RTOL of one rank's (the ranks' bf16 sums
              differ in order only), and unlike the fp32 run's by more than that (bf16 is used)
  gpt         gpt_tiny in bf16 O2 with master weights and gradients on 2 ranks, 50 steps: the last
              loss within 2% of the fp32 run's
  loss-scale  an fp16 O2 classifier with dynamic loss scaling (starting at 1024): one sample of
              step 3, on rank 1 of 2, is 1e6, which overflows fp16. Every rank skips step 3 (each
              says so), the scale halves there and nowhere else, training goes on, and the losses
              of every other step equal a 1-rank run's (global batch 8, which skips the same step)
              within FP16_RANKS_RTOL. The scale is saved: resumed after step 4, steps 5-7 start
              from 512 and repeat the uninterrupted run's losses bit for bit
  clip        a linear model (MSE, SGD, lr 1) clipped to a global norm below its gradient's: the
              parameters after one step equal numpy's clip_grad_norm_ reference, and one rank's,
              within 1e-6 relative, on 1 rank unsharded (every gradient whole) and on 3 ranks with compact
              (uneven) shards, in one bucket and in one per parameter; a norm above the
              gradient's leaves the step unclipped
Prints "OK: ..." and exits 0, or says what differs and exits 1.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

# bf16 keeps 8 significant bits: sums over ranks in another order move a loss by a few units of
# its last place.
BF16_RANKS_RTOL = 2e-3
FP16_RANKS_RTOL = 5e-3


def run(cmd, expect=0):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if result.returncode != expect:
        sys.exit(f"FAILED ({result.returncode}, expected {expect}): {' '.join(cmd)}\n"
                 f"{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def read_losses(path):
    """{step: (loss, bits)} of a --loss-log file."""
    losses = {}
    with open(path) as log:
        for line in log:
            if not line.startswith("#"):
                step, loss, _, bits = line.split()
                losses[int(step)] = (float(loss), bits)
    return losses


def read_safetensors(path):
    """{name: array}; BF16 comes back as float32 (its bits are fp32's top half)."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        if info["dtype"] == "BF16":
            array = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            array = np.frombuffer(raw, {"F32": np.float32, "F16": np.float16}[info["dtype"]])
        tensors[name] = (info["dtype"], array.reshape(info["shape"]))
    return tensors


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        dtype = {np.float32: "F32", np.int64: "I64"}[array.dtype.type]
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def to_bf16(values):
    """float32 rounded to bf16 (nearest even), as float32."""
    bits = values.astype(np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.view(np.float32)


class Programs:
    def __init__(self, build, mpiexec, preflags, tmp):
        self.build, self.tmp = build, tmp
        self.mpi = [mpiexec, *preflags]
        apps = os.path.join(build, "apps")
        self.rewrite = os.path.join(apps, "rewrite-graph")
        self.exec = os.path.join(apps, "graph-exec")
        self.convert = os.path.join(apps, "checkpoint-convert")
        self.generate = os.path.join(build, "models", "generate-models")
        self.source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def path(self, name):
        return os.path.join(self.tmp, name)

    def train(self, n, graph, *args, expect=0):
        return run([*self.mpi, "-np", str(n), self.exec, graph, *args], expect=expect)

    def rewritten(self, graph, n, *flags):
        out = self.path(f"{os.path.basename(graph)}.{n}{''.join(flags).replace('-', '_')}.onnx")
        run([self.rewrite, graph, "-o", out, "--nranks", str(n), *flags])
        return out

    def demo(self, model, batch, samples=48):
        """generate-models' `model` with `batch` rows per rank and step: (graph, data)."""
        folder = self.path(f"{model}-b{batch}")
        if not os.path.isdir(folder):
            run([self.generate, "--model", model, "--batch", str(batch), "--samples",
                 str(samples), "--out-dir", folder])
        return os.path.join(folder, f"{model}.onnx"), os.path.join(folder,
                                                                    "mlp_demo_data.safetensors")


MASTER = ["--master-weights", "--master-grads"]


def check_consolidated(p, checkpoint):
    """--weights master writes the fp32 master copies, --weights params the bf16 parameters: the
    copies rounded to bf16."""
    weights = {}
    for kind in ("master", "params"):
        out = p.path(f"consolidated-{kind}")
        run([p.convert, checkpoint, out, "--to", "consolidated", "--weights", kind])
        weights[kind] = read_safetensors(os.path.join(out, "model.safetensors"))
    assert weights["master"].keys() == weights["params"].keys(), weights["master"].keys()
    for name, (dtype, master) in weights["master"].items():
        params_dtype, params = weights["params"][name]
        assert (dtype, params_dtype) == ("F32", "BF16"), f"{name}: {dtype}, {params_dtype}"
        if not np.array_equal(to_bf16(master), params):
            sys.exit(f"parameter {name} is not its master copy rounded to bf16")


def check_protocol(p):
    data = os.path.join(p.source, "models", "mlp_demo_data.safetensors")
    for model in ("mlp_demo_bf16_o1", "mlp_demo_bf16_o2"):
        graph = p.rewritten(os.path.join(p.source, "models", f"{model}.onnx"), 2, "--overlap",
                            *MASTER)
        for fmt in ("unbalanced", "balanced"):
            ckpt, first, second = (p.path(f"{model}-{fmt}{s}") for s in ("", ".1.log", ".2.log"))
            common = [graph, "--data", data, "--steps", "10"]
            p.train(2, *common, "--save", ckpt, "--save-every", "3", "--save-format", fmt,
                    "--loss-log", first)
            p.train(2, *common, "--load", os.path.join(ckpt, "step-000002"), "--loss-log", second)
            a, b = read_losses(first), read_losses(second)
            assert sorted(b) == list(range(3, 10)), f"{model} {fmt}: resumed steps {sorted(b)}"
            for step in range(3, 10):
                if a[step][1] != b[step][1]:
                    sys.exit(f"{model} {fmt}: step {step}: loss {b[step]} resumed, {a[step]} "
                             "uninterrupted; they must be bit-identical")
        if model.endswith("o2"):
            check_consolidated(p, os.path.join(p.path(f"{model}-balanced"), "step-000008"))
        # A balanced checkpoint of 2 ranks continues on 4.
        graph4 = p.rewritten(p.demo(model, 2)[0], 4, "--overlap", *MASTER)
        log4 = p.path(f"{model}-4.log")
        p.train(4, graph4, "--data", data, "--steps", "10", "--load",
                os.path.join(p.path(f"{model}-balanced"), "step-000002"), "--loss-log", log4)
        a, c = read_losses(p.path(f"{model}-balanced.1.log")), read_losses(log4)
        for step in range(3, 10):
            if abs(c[step][0] - a[step][0]) > BF16_RANKS_RTOL * abs(a[step][0]):
                sys.exit(f"{model}: step {step} on 4 ranks after a 2-rank checkpoint: loss "
                         f"{c[step][0]}, {a[step][0]} on 2 ranks")
    print("OK: the seed protocol in AMP bf16 O1 and O2 with master weights and gradients, both "
          "formats: steps 3-9 bit-identical after resuming; consolidated master and bf16 weights "
          "agree; a 2-rank checkpoint continues on 4 ranks")


def check_ranks(p):
    losses = {}
    for n in (1, 2, 4):
        graph, data = p.demo("mlp_demo_bf16_o2", 12 // n)
        log = p.path(f"ranks{n}.log")
        p.train(n, p.rewritten(graph, n, "--overlap", *MASTER), "--data", data, "--steps", "10",
                "--lr", "0.01", "--loss-log", log)
        losses[n] = read_losses(log)
    graph, data = p.demo("mlp_demo", 12)
    log = p.path("fp32.log")
    p.train(1, graph, "--data", data, "--steps", "10", "--lr", "0.01", "--loss-log", log)
    fp32 = read_losses(log)
    worst = 0.0
    for n in (2, 4):
        for step in range(10):
            ref, got = losses[1][step][0], losses[n][step][0]
            rel = abs(got - ref) / abs(ref)
            worst = max(worst, rel)
            if rel > BF16_RANKS_RTOL:
                sys.exit(f"step {step}: {n} ranks' loss {got}, one rank's {ref} (rel {rel:.3g})")
    assert any(losses[1][s][1] != fp32[s][1] for s in range(10)), "the bf16 run is the fp32 run"
    print(f"OK: bf16 O2 with master weights on 1, 2 and 4 ranks: losses within {worst:.3g} "
          f"relative of one rank's (tolerance {BF16_RANKS_RTOL})")


def check_gpt(p):
    forward = os.path.join(p.source, "models", "gpt_tiny.forward.onnx")
    data = os.path.join(p.source, "models", "gpt_tiny_data.safetensors")
    finals = {}
    for tag, flags in (("fp32", []), ("bf16", ["--amp", "bf16", "--amp-level", "O2"])):
        train_graph = p.path(f"gpt-{tag}.onnx")
        run([p.rewrite, forward, "-o", train_graph, "--train", *flags])
        extra = MASTER if tag == "bf16" else []
        log = p.path(f"gpt-{tag}.log")
        p.train(2, p.rewritten(train_graph, 2, "--overlap", *extra), "--data", data, "--steps",
                "50", "--batch", "8", "--lr", "0.003", "--loss-log", log)
        finals[tag] = read_losses(log)[49][0]
    rel = abs(finals["bf16"] - finals["fp32"]) / finals["fp32"]
    if rel > 0.02:
        sys.exit(f"gpt_tiny after 50 steps: bf16 O2 loss {finals['bf16']}, fp32 {finals['fp32']} "
                 f"(rel {rel:.3g} > 0.02)")
    print(f"OK: gpt_tiny bf16 O2 with master weights, 50 steps on 2 ranks: loss {finals['bf16']:.6g}"
          f", fp32 {finals['fp32']:.6g} (rel {rel:.3g}, within 2%)")


def classifier(p, dtype_flags, extra_flags, name):
    """tests/cli's classifier trained by --train with the given flags; its training graph."""
    run([sys.executable, os.path.join(p.source, "tests", "cli", "make_forward_models.py"),
         p.tmp])
    out = p.path(f"{name}.onnx")
    run([p.rewrite, p.path("classifier.onnx"), "-o", out, "--train", "--loss", "mse",
         *dtype_flags, *extra_flags])
    return out


def step_lines(output):
    return {int(line.split()[1]): line for line in output.splitlines() if line.startswith("step ")}


def check_loss_scale(p):
    rng = np.random.default_rng(3)
    samples, batch = 64, 8
    x = rng.normal(size=(samples, 8)).astype(np.float32)
    y = rng.normal(size=(samples, 4)).astype(np.float32)
    # Step 3's rows are 24-31; rank 1 of 2 takes 28-31.
    x[29, 2] = 1e6
    data = p.path("overflow.safetensors")
    write_safetensors(data, {"x": x, "labels": y})
    graph = classifier(p, ["--amp", "fp16", "--amp-level", "O2"],
                       ["--loss-scale", "1024", "--optimizer", "sgd"], "fp16")
    results = {}
    for n in (1, 2):
        log = p.path(f"fp16-{n}.log")
        out = p.train(n, p.rewritten(graph, n, "--overlap", *MASTER), "--data", data, "--steps",
                      "8", "--batch", str(batch), "--lr", "0.01", "--loss-log", log)
        lines = step_lines(out)
        skipped = sorted(s for s, line in lines.items() if "skipped" in line)
        assert skipped == [3], f"{n} rank(s): skipped steps {skipped}\n{out}"
        scales = {s: float(line.split("loss-scale ")[1].split()[0]) for s, line in lines.items()}
        assert scales[2] == 1024 and scales[3] == 512 and scales[7] == 512, f"scales {scales}"
        results[n] = read_losses(log)
    # The scale is state: a run resumed after step 4 starts from 512, and repeats the rest.
    graph2 = p.rewritten(graph, 2, "--overlap", *MASTER)
    ckpt, resumed_log = p.path("fp16-ckpt"), p.path("fp16-resumed.log")
    p.train(2, graph2, "--data", data, "--steps", "5", "--batch", str(batch), "--lr", "0.01",
            "--save", ckpt)
    out = p.train(2, graph2, "--data", data, "--steps", "8", "--batch", str(batch), "--lr",
                  "0.01", "--load", ckpt, "--loss-log", resumed_log)
    assert "loss-scale 512" in step_lines(out)[5], out
    resumed = read_losses(resumed_log)
    for step in range(5, 8):
        assert resumed[step][1] == results[2][step][1], f"step {step} after resuming: {resumed}"
    for step in range(8):
        if step == 3:
            continue
        a, b = results[1][step][0], results[2][step][0]
        assert np.isfinite(a) and np.isfinite(b), f"step {step}: losses {a}, {b}"
        if abs(a - b) > FP16_RANKS_RTOL * abs(a):
            sys.exit(f"step {step}: 2 ranks' loss {b}, one rank's {a}")
    print("OK: fp16 with loss scaling: the overflow planted on rank 1 at step 3 is skipped by "
          "every rank, the scale halves (1024 -> 512), and the other steps match one rank's")


def check_clip(p):
    rng = np.random.default_rng(5)
    rows, n_in, n_out = 12, 8, 5
    x = rng.normal(size=(rows, n_in)).astype(np.float32)
    y = rng.normal(size=(rows, n_out)).astype(np.float32)
    w0 = rng.uniform(-0.5, 0.5, (n_in, n_out)).astype(np.float32)
    b0 = rng.uniform(-0.5, 0.5, (n_out,)).astype(np.float32)
    data = p.path("linear.safetensors")
    write_safetensors(data, {"x": x, "labels": y})
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"])], "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", n_in])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n_out])],
        [numpy_helper.from_array(w0, "w"), numpy_helper.from_array(b0, "b")]),
        opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    forward = p.path("linear.onnx")
    onnx.save(model, forward)

    # numpy: MSE over every element, its gradient, PyTorch's clip_grad_norm_, one SGD step.
    residual = x.astype(np.float64) @ w0 + b0 - y
    scale = 2.0 / residual.size
    gw, gb = scale * x.T @ residual, scale * residual.sum(axis=0)
    norm = np.sqrt((gw ** 2).sum() + (gb ** 2).sum())

    for max_norm in (0.5 * norm, 2.0 * norm):
        coef = min(1.0, max_norm / (norm + 1e-6))
        expected = {"w": w0 - coef * gw, "b": b0 - coef * gb}
        graph = p.path("linear-train.onnx")
        run([p.rewrite, forward, "-o", graph, "--train", "--loss", "mse", "--optimizer", "sgd",
             "--clip-grad-norm", repr(float(max_norm))])
        one_rank = {}
        runs = [(1, graph)]
        for flags in (["--align", "compact"], ["--align", "compact", "--comm-buffer-mb",
                                                 "0.0001"]):
            runs.append((3, p.rewritten(graph, 3, "--overlap", *flags)))
        for n, g in runs:
            ckpt = p.path(f"clip-{n}-{len(g)}-{max_norm:.3g}")
            out = p.train(n, g, "--data", data, "--steps", "1", "--batch", str(rows), "--lr", "1",
                          "--save", ckpt, "--save-every", "1", "--save-format", "balanced")
            reported = float(step_lines(out)[0].split("grad-norm ")[1].split()[0])
            assert abs(reported - norm) <= 1e-5 * norm, f"grad-norm {reported}, numpy {norm}"
            consolidated = p.path(f"{os.path.basename(ckpt)}-weights")
            run([p.convert, os.path.join(ckpt, "step-000000"), consolidated, "--to",
                 "consolidated"])
            got = read_safetensors(os.path.join(consolidated, "model.safetensors"))
            for name, want in expected.items():
                have = got[name][1].astype(np.float64)
                one_rank.setdefault(name, have)
                for what, reference in (("numpy's", want), ("one rank's", one_rank[name])):
                    rel = np.abs(have - reference).max() / np.abs(reference).max()
                    if rel > 1e-6:
                        sys.exit(f"max norm {max_norm:.4g} on {n} rank(s) "
                                 f"({os.path.basename(g)}): '{name}' after one step differs from "
                                 f"{what} by {rel:.3g} relative")
    print(f"OK: clipping by global norm (gradient norm {norm:.4g}, clipped to half of it and left "
          "alone at twice it) matches numpy within 1e-6 on 1 rank and on 3 ranks with uneven "
          "shards, one bucket and one per parameter")


def main():
    build, check, mpiexec, *preflags = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        p = Programs(build, mpiexec, preflags, tmp)
        {"protocol": check_protocol, "ranks": check_ranks, "gpt": check_gpt,
         "loss-scale": check_loss_scale, "clip": check_clip}[check](p)


if __name__ == "__main__":
    main()
