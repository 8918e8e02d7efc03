#!/usr/bin/env python3
"""A GPT-like model on the CPU: zerograph (run-model-bench) against ONNX Runtime, side by side.

Three subcommands; scripts/bench.sh --only gpt runs them through bench/gpt_vs_onnxruntime.sh.

  model OUT [--layers 4 --dim 256 --heads 4 --vocab 512 --seq 128 --batch 8 --seed 0
             --gelu op|erf --qkv separate|fused]
      Needs numpy and onnx (1.16); with onnxruntime-training (1.19.2) importable it also makes
      ONNX Runtime Training's artifacts. Writes into OUT:
        forward.onnx, forward.inputs/input_0.pb     the decoder's forward pass: idx -> logits
        proxy.onnx, proxy.inputs/input_0.pb         the same with the ops zerograph lacked when
                                                    this was written swapped for ones it had
        train_forward.onnx                          the same plus nanoGPT's logits.view(-1, vocab),
                                                    the input of generate_artifacts
        artifacts/training_model.onnx (+ eval, optimizer, checkpoint), train.inputs/input_N.pb
                                                    forward + backward as ORT emits it, and one
                                                    file per graph input that is not an
                                                    initializer: idx, labels, every parameter
                                                    (the forward's initial values), every gradient
                                                    accumulation buffer (zeros), lazy_reset_grad
        ops.json                                    the ops of both graphs, with counts
  time-ort MODEL INPUT_DIR --threads N --reps R
      Times ONNX Runtime's InferenceSession on MODEL (intra_op_num_threads N, inter_op 1,
      sequential execution, default graph optimizations), inputs from INPUT_DIR's input_N.pb:
      load and one warm-up run untimed, then R timed runs; prints one key=value line as
      run-model-bench does.
  compare --work OUT --bench BIN --ort-python PY --ort-training-python PY --threads N
          --rounds K --reps R
      Runs every variant K times, alternating (a round runs each once, in a fresh process of its
      own), R timed runs each, and prints the Markdown of the docs section: the medians over all
      timed runs and the ratios. A side that cannot run (zerograph before its kernels land) is
      reported with its error instead of a time.

The model is what torch.onnx.export makes of nanoGPT (Karpathy's model.py: GPT-2's block, bias on,
dropout 0, tied LM head) in eval mode: token and position embeddings (Gather), per block
LayerNormalization -> causal self-attention -> residual Add -> LayerNormalization -> MLP ->
residual Add, a final LayerNormalization and the LM head (MatMul by the transposed token
embedding). The exporter's choices are kept: Linear layers as MatMul + Add with the weight stored
[in, out]; q, k, v reshaped to [batch, seq, heads, head] and transposed to [batch, heads, seq,
head] (k straight to [batch, heads, head, seq]: the exporter fuses the two transposes); the
scores scaled by Mul with 1/sqrt(head); the causal mask added (0 / -1e9, [seq, seq]) before
Softmax(axis=-1); fixed shapes (the exporter's constants for a fixed batch). Differences from an
export: logits for every position (nanoGPT's generate path keeps only the last; training needs
all), and by default separate q, k, v projections (--qkv fused: one c_attn and a Split, as nanoGPT
writes it) and the Gelu op of opset 20 (--gelu erf: x * 0.5 * (1 + erf(x / sqrt(2))), as the
exporter writes GELU at opset 17; ONNX Runtime Training then fuses it, and its training graph
holds com.microsoft.Gelu and Concat for Split's gradient).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time


def build_model(a, np, onnx, proxy=False):
    """The forward model, its training forward, and their inputs. proxy: the forward with the ops
    zerograph has no CPU kernel for today swapped for ones it has (Gather -> a float input,
    LayerNormalization -> Identity, Softmax and Gelu -> Relu): the same GEMMs, reshapes,
    transposes and adds, to compare those parts before the kernels land."""
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    B, S, D, H, V, L = a.batch, a.seq, a.dim, a.heads, a.vocab, a.layers
    hs = D // H
    rng = np.random.default_rng(a.seed)
    inits, nodes = [], []

    def init(name, array):
        inits.append(nh.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(name, shape, std=0.02):
        return init(name, (rng.standard_normal(shape) * std).astype(np.float32))

    def node(op, inputs, name, outputs=None, **attrs):
        outputs = outputs or [name + "_output_0"]
        nodes.append(h.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def scope_of(prefix):  # module path -> the exporter's node scope: transformer.h.0.ln_1 ->
        return re.sub(r"/h/(\d+)", r"/h.\1", "/" + prefix.replace(".", "/"))  # /transformer/h.0/ln_1

    def linear(x, prefix, n_in, n_out, std=0.02):
        w = weight(prefix + ".weight", [n_in, n_out], std)
        b = init(prefix + ".bias", np.zeros([n_out], np.float32))
        scope = scope_of(prefix)
        return node("Add", [node("MatMul", [x, w], scope + "/MatMul"), b], scope + "/Add")

    def layer_norm(x, prefix):
        if proxy:
            return node("Identity", [x], scope_of(prefix) + "/Identity")
        w = init(prefix + ".weight", np.ones([D], np.float32))
        b = init(prefix + ".bias", np.zeros([D], np.float32))
        return node("LayerNormalization", [x, w, b], scope_of(prefix) + "/LayerNormalization",
                    axis=-1, epsilon=1e-5)

    def gelu(x, scope):
        if proxy:
            return node("Relu", [x], scope + "/Relu")
        if a.gelu == "op":
            return node("Gelu", [x], scope + "/Gelu")
        y = node("Div", [x, "sqrt_2"], scope + "/Div")
        y = node("Erf", [y], scope + "/Erf")
        y = node("Add", [y, "one"], scope + "/Add")
        y = node("Mul", [x, y], scope + "/Mul")
        return node("Mul", [y, "half"], scope + "/Mul_1")

    init("pos", np.arange(S, dtype=np.int64))
    init("mask", np.triu(np.full([S, S], -1e9, np.float32), 1))
    init("scale", np.array(1 / np.sqrt(hs), np.float32))
    init("shape_bshd", np.array([B, S, H, hs], np.int64))
    init("shape_bsd", np.array([B, S, D], np.int64))
    if a.gelu == "erf":
        init("sqrt_2", np.array(np.sqrt(2), np.float32))
        init("one", np.array(1, np.float32))
        init("half", np.array(0.5, np.float32))
    if a.qkv == "fused":
        init("split_qkv", np.array([D, D, D], np.int64))

    wte = weight("transformer.wte.weight", [V, D])
    wpe = weight("transformer.wpe.weight", [S, D])
    if proxy:
        x = node("Add", ["x", wpe], "/transformer/Add")
    else:
        tok = node("Gather", [wte, "idx"], "/transformer/wte/Gather")
        pos = node("Gather", [wpe, "pos"], "/transformer/wpe/Gather")
        x = node("Add", [tok, pos], "/transformer/Add")
    proj_std = 0.02 / np.sqrt(2 * L)  # nanoGPT's special init of the c_proj weights
    for l in range(L):
        p = f"transformer.h.{l}"
        s = f"/transformer/h.{l}"
        n1 = layer_norm(x, p + ".ln_1")
        if a.qkv == "fused":
            qkv = linear(n1, p + ".attn.c_attn", D, 3 * D)
            q, k, v = node("Split", [qkv, "split_qkv"], s + "/attn/Split",
                           [s + f"/attn/Split_output_{i}" for i in range(3)], axis=2)
        else:
            q, k, v = (linear(n1, p + f".attn.{t}_proj", D, D) for t in "qkv")
        heads = []
        for t, y, perm in (("q", q, [0, 2, 1, 3]), ("k", k, [0, 2, 3, 1]), ("v", v, [0, 2, 1, 3])):
            y = node("Reshape", [y, "shape_bshd"], s + f"/attn/Reshape_{t}")
            heads.append(node("Transpose", [y], s + f"/attn/Transpose_{t}", perm=perm))
        att = node("MatMul", [heads[0], heads[1]], s + "/attn/MatMul")
        att = node("Mul", [att, "scale"], s + "/attn/Mul")
        att = node("Add", [att, "mask"], s + "/attn/Add")
        if proxy:
            att = node("Relu", [att], s + "/attn/Relu")
        else:
            att = node("Softmax", [att], s + "/attn/Softmax", axis=-1)
        y = node("MatMul", [att, heads[2]], s + "/attn/MatMul_1")
        y = node("Transpose", [y], s + "/attn/Transpose_y", perm=[0, 2, 1, 3])
        y = node("Reshape", [y, "shape_bsd"], s + "/attn/Reshape_y")
        y = linear(y, p + ".attn.c_proj", D, D, proj_std)
        x = node("Add", [x, y], s + "/Add")
        n2 = layer_norm(x, p + ".ln_2")
        y = gelu(linear(n2, p + ".mlp.c_fc", D, 4 * D), s + "/mlp/gelu")
        y = linear(y, p + ".mlp.c_proj", 4 * D, D, proj_std)
        x = node("Add", [x, y], s + "/Add_1")
    x = layer_norm(x, "transformer.ln_f")
    wte_t = node("Transpose", [wte], "/lm_head/Transpose", perm=[1, 0])
    nodes.append(h.make_node("MatMul", [x, wte_t], ["logits"], name="/lm_head/MatMul"))

    opset = [h.make_opsetid("", 20 if a.gelu == "op" else 17)]
    graph_input = (h.make_tensor_value_info("x", T.FLOAT, [B, S, D]) if proxy else
                   h.make_tensor_value_info("idx", T.INT64, [B, S]))
    graph = h.make_graph(nodes, "nanogpt", [graph_input],
                         [h.make_tensor_value_info("logits", T.FLOAT, [B, S, V])],
                         [i for i in inits if i.name not in ("pos",) or not proxy])
    forward = h.make_model(graph, opset_imports=opset, producer_name="zerograph-bench")
    forward.ir_version = 8
    if proxy:
        return forward, rng.standard_normal([B, S, D]).astype(np.float32)
    # nanoGPT's loss: F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    train = onnx.ModelProto()
    train.CopyFrom(forward)
    train.graph.output[0].name = "logits"
    train.graph.node[-1].output[0] = "logits_bsv"
    train.graph.initializer.append(nh.from_array(np.array([-1, V], np.int64), "shape_flat"))
    # ORT's LayerNormalization gradient reads the mean and inverse deviation the forward saved:
    # generate_artifacts fails on a LayerNormalization that has only Y (as an export has).
    for n in train.graph.node:
        if n.op_type == "LayerNormalization":
            n.output.extend([n.output[0] + ".mean", n.output[0] + ".inv_std_dev"])
    train.graph.node.append(h.make_node("Reshape", ["logits_bsv", "shape_flat"], ["logits"],
                                        name="/Reshape_logits"))
    del train.graph.output[:]
    train.graph.output.append(h.make_tensor_value_info("logits", T.FLOAT, [B * S, V]))
    idx = rng.integers(0, V, [B, S]).astype(np.int64)
    labels = rng.integers(0, V, [B * S]).astype(np.int64)
    return forward, train, idx, labels


def op_counts(model):
    counts = {}
    for n in model.graph.node:
        key = (n.domain or "ai.onnx") + "." + n.op_type
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def write_inputs(folder, arrays, np, onnx):
    from onnx import numpy_helper as nh

    os.makedirs(folder, exist_ok=True)
    for i, (name, array) in enumerate(arrays):
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(nh.from_array(np.ascontiguousarray(array), name).SerializeToString())


def cmd_model(a):
    import numpy as np
    import onnx
    from onnx import TensorProto as T, numpy_helper as nh

    forward, train, idx, labels = build_model(a, np, onnx)
    onnx.checker.check_model(forward, full_check=True)
    onnx.checker.check_model(train, full_check=True)
    os.makedirs(a.out, exist_ok=True)
    onnx.save(forward, os.path.join(a.out, "forward.onnx"))
    onnx.save(train, os.path.join(a.out, "train_forward.onnx"))
    write_inputs(os.path.join(a.out, "forward.inputs"), [("idx", idx)], np, onnx)
    proxy, x = build_model(a, np, onnx, proxy=True)
    onnx.checker.check_model(proxy, full_check=True)
    onnx.save(proxy, os.path.join(a.out, "proxy.onnx"))
    write_inputs(os.path.join(a.out, "proxy.inputs"), [("x", x)], np, onnx)
    ops = {"settings": {k: v for k, v in vars(a).items() if k not in ("out", "cmd")},
           "opset": forward.opset_import[0].version, "forward.onnx": op_counts(forward),
           "proxy.onnx": op_counts(proxy)}
    params = [i.name for i in train.graph.initializer
              if i.data_type == T.FLOAT and i.name.startswith("transformer.")]
    ops["parameters"] = len(params)
    ops["parameter_elements"] = int(sum(np.prod(i.dims) for i in train.graph.initializer
                                        if i.name in params))
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import gpt_torch_stub  # noqa: F401  (onnxruntime.training imports torch, uses none of it)
        import onnxruntime
        from onnxruntime.training import artifacts

        onnxruntime.set_default_logger_severity(3)
    except ImportError as e:
        print(f"model: no ONNX Runtime Training ({e}): made the forward model only", file=sys.stderr)
        json.dump(ops, open(os.path.join(a.out, "ops.json"), "w"), indent=1)
        return
    art = os.path.join(a.out, "artifacts")
    os.makedirs(art, exist_ok=True)
    artifacts.generate_artifacts(train, requires_grad=params, frozen_params=[],
                                 loss=artifacts.LossType.CrossEntropyLoss,
                                 optimizer=artifacts.OptimType.AdamW, artifact_directory=art)
    tm = onnx.load(os.path.join(art, "training_model.onnx"))
    values = {i.name: nh.to_array(i) for i in train.graph.initializer}
    initializers = {i.name for i in tm.graph.initializer}
    feeds = []
    for i in tm.graph.input:
        if i.name in initializers:
            continue
        t = i.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        if i.name == "idx":
            feeds.append((i.name, idx))
        elif i.name in values:
            feeds.append((i.name, values[i.name]))
        elif i.name.endswith("_grad.accumulation.buffer"):
            feeds.append((i.name, np.zeros(shape, np.float32)))
        elif t.elem_type == T.BOOL:  # lazy_reset_grad: start every step's gradients from zero
            feeds.append((i.name, np.ones(shape, np.bool_)))
        elif t.elem_type == T.INT64:  # the labels input ORT's loss block adds
            feeds.append((i.name, labels.reshape(shape)))
        else:
            raise SystemExit(f"model: no value for training_model.onnx input '{i.name}'")
    write_inputs(os.path.join(a.out, "train.inputs"), feeds, np, onnx)
    ops["training_model.onnx"] = op_counts(tm)
    json.dump(ops, open(os.path.join(a.out, "ops.json"), "w"), indent=1)


def cmd_time_ort(a):
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper as nh

    model = onnx.load(a.model, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    feeds = {}
    for n, name in enumerate(names):
        with open(os.path.join(a.input_dir, f"input_{n}.pb"), "rb") as f:
            feeds[name] = nh.to_array(onnx.TensorProto.FromString(f.read()))
    options = ort.SessionOptions()
    options.intra_op_num_threads = a.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if a.no_optimizations:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    start = time.perf_counter()
    session = ort.InferenceSession(a.model, options, providers=["CPUExecutionProvider"])
    session.run(None, feeds)  # warm-up
    prepare_ms = (time.perf_counter() - start) * 1e3
    ms = []
    for _ in range(a.reps):
        start = time.perf_counter()
        session.run(None, feeds)
        ms.append((time.perf_counter() - start) * 1e3)
    q = statistics.quantiles(ms, n=4, method="inclusive") if len(ms) > 1 else ms * 3
    print(f"median_ms={statistics.median(ms):.3f} min_ms={min(ms):.3f} q1_ms={q[0]:.3f} "
          f"q3_ms={q[2]:.3f} max_ms={max(ms):.3f} reps={a.reps} prepare_ms={prepare_ms:.1f} "
          f"threads={a.threads} ort={ort.__version__} all_ms={','.join(f'{m:.3f}' for m in ms)}")


# OpenBLAS's kernels for AVX-512 (it names them after Intel cores). OpenBLAS 0.3.21 (Debian 12)
# takes an AMD CPU with AVX-512 (Zen 4) for a Haswell and runs its AVX2 kernels there; this
# setting, read when the library loads, makes it use these.
AVX512_CORETYPE = "SKYLAKEX"


def run_variant(command, env=None):
    """Runs one process of a variant: its fields (median_ms, ...), or the error that stopped it.
    OpenBLAS is asked to say which core's kernels it chose (field blas_core)."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2", **(env or {}))
    for name in [name for name, value in env.items() if value is None]:
        del env[name]  # None: the variant runs without that variable
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env)
    except OSError as e:  # no such program: a virtual environment that could not be made
        return None, f"cannot run {command[0]}: {e.strerror}"
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.strip()]
        errors = [l for l in lines if l.startswith("error:") or "Error" in l or "error" in l]
        return None, (errors or lines or [f"exit {done.returncode}"])[-1].strip()
    fields = dict(f.split("=", 1) for f in done.stdout.split() if "=" in f)
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("Core: "):
            fields["blas_core"] = line.split(":", 1)[1].strip()
    return fields, None


def cmd_compare(a):
    w = a.work
    t = str(a.threads)
    r = str(a.reps)
    me = os.path.abspath(__file__)
    fwd, fwd_in = os.path.join(w, "forward.onnx"), os.path.join(w, "forward.inputs")
    prx, prx_in = os.path.join(w, "proxy.onnx"), os.path.join(w, "proxy.inputs")
    trn = os.path.join(w, "artifacts", "training_model.onnx")
    trn_in = os.path.join(w, "train.inputs")
    have_train = os.path.exists(trn)
    variants = [  # (key, label, command)
        ("fwd_zg", "zerograph", [a.bench, fwd, "--input-dir", fwd_in, "--reps", r]),
        ("fwd_ort", "onnxruntime", [a.ort_python, me, "time-ort", fwd, fwd_in, "--threads", t,
                                    "--reps", r]),
        ("fwd_ort_noopt", "onnxruntime without graph optimizations",
         [a.ort_python, me, "time-ort", fwd, fwd_in, "--threads", t, "--reps", r,
          "--no-optimizations"]),
        ("fwd_ort_tr", "onnxruntime-training", [a.ort_training_python, me, "time-ort", fwd,
                                                fwd_in, "--threads", t, "--reps", r]),
    ]
    # The proxy forward (no Gather, LayerNormalization, Softmax or Gelu) stood in for the forward
    # before zerograph had those kernels; --proxy still times it.
    if a.proxy:
        variants += [
            ("prx_zg", "zerograph", [a.bench, prx, "--input-dir", prx_in, "--reps", r]),
            ("prx_ort", "onnxruntime", [a.ort_python, me, "time-ort", prx, prx_in, "--threads",
                                        t, "--reps", r]),
            ("prx_ort_noopt", "onnxruntime without graph optimizations",
             [a.ort_python, me, "time-ort", prx, prx_in, "--threads", t, "--reps", r,
              "--no-optimizations"]),
        ]
    if have_train:
        variants += [
            ("trn_zg", "zerograph", [a.bench, trn, "--input-dir", trn_in, "--reps", r]),
            ("trn_ort_tr", "onnxruntime-training", [a.ort_training_python, me, "time-ort", trn,
                                                    trn_in, "--threads", t, "--reps", r]),
            ("trn_ort_tr_noopt", "onnxruntime-training without graph optimizations",
             [a.ort_training_python, me, "time-ort", trn, trn_in, "--threads", t, "--reps", r,
              "--no-optimizations"]),
        ]
    os.environ["OPENBLAS_NUM_THREADS"] = t
    # zerograph once more with OpenBLAS on its AVX-512 kernels, where the CPU has them, and, when
    # the environment chooses OpenBLAS's kernels (OPENBLAS_CORETYPE), once without that choice.
    avx512 = "avx512f" in open("/proc/cpuinfo").read().split()
    env_core = os.environ.get("OPENBLAS_CORETYPE")
    variants = [(key, label, command, None) for key, label, command in variants]
    zg = [(key, label, command) for key, label, command, _ in variants if key.endswith("_zg")]
    if env_core is not None:
        variants += [(key + "_auto", label + ", OPENBLAS_CORETYPE unset", command,
                      {"OPENBLAS_CORETYPE": None}) for key, label, command in zg]
    if avx512:
        variants += [(key + "_sx", label + f", OPENBLAS_CORETYPE={AVX512_CORETYPE}", command,
                      {"OPENBLAS_CORETYPE": AVX512_CORETYPE}) for key, label, command in zg]
    results = {k: {"medians": [], "all": [], "error": None, "fields": None}
               for k, _, _, _ in variants}
    for round_ in range(a.rounds):
        for key, _, command, env in variants:
            res = results[key]
            if res["error"]:
                continue
            fields, error = run_variant(command, env)
            if error:
                res["error"] = error
                continue
            res["fields"] = fields
            res["medians"].append(float(fields["median_ms"]))
            if "all_ms" in fields:
                res["all"] += [float(x) for x in fields["all_ms"].split(",")]
            print(f"compare: round {round_ + 1} {key} {fields['median_ms']} ms", file=sys.stderr)

    def median(key):
        res = results.get(key)
        return statistics.median(res["medians"]) if res and res["medians"] else None

    def cell(key):
        res = results.get(key)
        if key is None or res is None:
            return "-"
        if res["error"]:
            return "not run"
        m = res["medians"]
        return f"{statistics.median(m):.1f} ({min(m):.1f}-{max(m):.1f})"

    def ratio(num, den, bold=False):
        x, y = median(num), median(den)
        if not (x and y):
            return "-"
        return f"**{x / y:.2f}x**" if bold else f"{x / y:.2f}x"

    ops = json.load(open(os.path.join(w, "ops.json")))
    ver = {}
    for key in ("fwd_ort", "fwd_ort_tr"):
        if results[key]["fields"]:
            ver[key] = results[key]["fields"].get("ort", "?")
    st = ops["settings"]
    if results["fwd_zg"]["error"]:
        print("**Draft: zerograph's side did not run** (its error is under the table), so only "
              "ONNX Runtime's times are here, the figures zerograph is to be held to. Rerun "
              "`scripts/bench.sh --only gpt` once the kernels are in.")
        print()
    print(f"Model (`bench/gpt_vs_onnxruntime.py model`, opset {ops['opset']}): {st['layers']} "
          f"blocks, width {st['dim']}, {st['heads']} heads, vocab {st['vocab']}, sequence "
          f"{st['seq']}, batch {st['batch']}, GELU as "
          f"{'the Gelu op' if st['gelu'] == 'op' else 'its Erf expansion'}, "
          f"{'separate q, k, v projections' if st['qkv'] == 'separate' else 'one c_attn and a Split'}"
          f", seed {st['seed']}; {ops['parameters']} parameter tensors, "
          f"{ops['parameter_elements']:,} elements.")
    print()
    print(f"Milliseconds per run: the median over {a.rounds} rounds of the per-process medians of "
          f"{a.reps} timed runs (after one untimed warm-up run; load and planning not timed), "
          "with the lowest and highest round in brackets. A round runs every variant once, in a "
          f"fresh process, alternating. {a.threads} threads on each side: ONNX Runtime "
          f"`intra_op_num_threads={a.threads}`, `inter_op_num_threads=1`, sequential execution, "
          "its default graph optimizations (it fuses what it knows); zerograph runs its kernels "
          f"on one stream thread and OpenBLAS on `OPENBLAS_NUM_THREADS={a.threads}`. "
          "onnxruntime is the inference package "
          f"{ver.get('fwd_ort', '(not run)')}; onnxruntime-training is "
          f"{ver.get('fwd_ort_tr', '(not run)')}, the package that made the training graph and the "
          "only one with kernels for its `com.microsoft` gradient ops.")
    print()
    def core(suffix):
        return next((results[k]["fields"].get("blas_core") for k in results
                     if k.endswith("_zg" + suffix) and results[k]["fields"]), None)

    def core_note(suffix):
        return f"; OpenBLAS ran its {core(suffix)} kernels" if core(suffix) else ""

    sx = f", `OPENBLAS_CORETYPE={AVX512_CORETYPE}`"
    auto = ", `OPENBLAS_CORETYPE` unset"
    here = (f", `OPENBLAS_CORETYPE={env_core}` from the environment" if env_core is not None
            else "")
    if env_core is not None:
        print(f"The environment this ran in sets `OPENBLAS_CORETYPE={env_core}`, which OpenBLAS "
              "obeys: the first zerograph row is what that environment gets, the row with it "
              "unset is OpenBLAS's own choice for this CPU.")
        print()
    rows = [  # label, forward, forward + backward, proxy
        ("zerograph" + here + core_note(""), "fwd_zg", "trn_zg", "prx_zg"),
        ("zerograph" + auto + core_note("_auto"), "fwd_zg_auto", "trn_zg_auto", "prx_zg_auto"),
        ("zerograph" + sx + core_note("_sx"), "fwd_zg_sx", "trn_zg_sx", "prx_zg_sx"),
        (f"onnxruntime {ver.get('fwd_ort', '')}", "fwd_ort", None, "prx_ort"),
        (f"onnxruntime {ver.get('fwd_ort', '')} without graph optimizations", "fwd_ort_noopt",
         None, "prx_ort_noopt"),
        (f"onnxruntime-training {ver.get('fwd_ort_tr', '')}", "fwd_ort_tr", "trn_ort_tr", None),
        (f"onnxruntime-training {ver.get('fwd_ort_tr', '')} without graph optimizations", None,
         "trn_ort_tr_noopt", None),
    ]
    if not avx512:
        rows = [r for r in rows if not r[1].endswith("_sx")]
    if env_core is None:
        rows = [r for r in rows if not r[1].endswith("_auto")]
    proxy = " proxy forward (`proxy.onnx`) |" if a.proxy else ""
    print("| | forward (`forward.onnx`) | forward + backward (`artifacts/training_model.onnx`) | "
          "forward + backward / forward |" + proxy)
    print("|---|---:|---:|---:|" + ("---:|" if a.proxy else ""))
    for label, f, t_, x in rows:
        both = ratio(t_, f) if f and t_ else "-"
        print(f"| {label} | {cell(f)} | {cell(t_)} | {both} |" +
              (f" {cell(x)} |" if a.proxy else ""))
    print()
    print("| ratio | forward (goal: at most 1.5x onnxruntime) | forward + backward |" +
          (" proxy forward |" if a.proxy else ""))
    print("|---|---:|---:|" + ("---:|" if a.proxy else ""))
    for suffix, label in [("", here), ("_auto", auto), ("_sx", sx)]:
        if (suffix == "_sx" and not avx512) or (suffix == "_auto" and env_core is None):
            continue
        print(f"| zerograph{label} / onnxruntime | {ratio('fwd_zg' + suffix, 'fwd_ort', True)} "
              "| - |" + (f" {ratio('prx_zg' + suffix, 'prx_ort', True)} |" if a.proxy else ""))
        print(f"| zerograph{label} / onnxruntime-training | "
              f"{ratio('fwd_zg' + suffix, 'fwd_ort_tr', True)} | "
              f"{ratio('trn_zg' + suffix, 'trn_ort_tr', True)} |" + (" - |" if a.proxy else ""))
    print()
    if not have_train:
        print("No forward + backward: onnxruntime-training could not be imported, so no training "
              "graph was made.")
        print()
    print("onnxruntime (the inference package) cannot run the training graph: it has no kernels "
          "for the gradient ops; onnxruntime-training made that graph and runs it.")
    print()
    if a.proxy:
        print("The proxy forward is not the issue's measure: it is the forward with the ops "
              "zerograph had no CPU kernel for when this benchmark was written swapped for ones it "
              "had (`Gather` -> a float input, `LayerNormalization` -> `Identity`, `Softmax` and "
              "`Gelu` -> `Relu`), keeping the same GEMMs, reshapes, transposes and adds, so that "
              "those parts could be compared before the kernels landed.")
        print()
    def base(key):  # the variant a BLAS-setting variant repeats
        return key.rsplit("_", 1)[0] if key.endswith(("_sx", "_auto")) else key

    errors = [(label, key, results[key]["error"]) for key, label, _, _ in variants
              if results[key]["error"] and not (base(key) != key and results[base(key)]["error"]
                                                == results[key]["error"])]
    for label, key, error in errors:
        what = {"fwd": "forward", "trn": "forward + backward", "prx": "proxy"}[key[:3]]
        print(f"- Not run, {label}, {what}: `{error}`")
    if errors:
        print()
    for name in ("forward.onnx", "training_model.onnx") + (("proxy.onnx",) if a.proxy else ()):
        if name in ops:
            listed = ", ".join(f"{k.replace('ai.onnx.', '')} {v}" for k, v in ops[name].items())
            print(f"- Ops of `{name}` ({sum(ops[name].values())} nodes): {listed}.")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("out")
    m.add_argument("--layers", type=int, default=4)
    m.add_argument("--dim", type=int, default=256)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--vocab", type=int, default=512)
    m.add_argument("--seq", type=int, default=128)
    m.add_argument("--batch", type=int, default=8)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--gelu", choices=["op", "erf"], default="op")
    m.add_argument("--qkv", choices=["separate", "fused"], default="separate")
    o = sub.add_parser("time-ort")
    o.add_argument("model")
    o.add_argument("input_dir")
    o.add_argument("--threads", type=int, required=True)
    o.add_argument("--reps", type=int, default=10)
    o.add_argument("--no-optimizations", action="store_true",
                   help="run the graph as it is: no fusions, no constant folding")
    c = sub.add_parser("compare")
    c.add_argument("--work", required=True)
    c.add_argument("--bench", required=True)
    c.add_argument("--ort-python", required=True)
    c.add_argument("--ort-training-python", required=True)
    c.add_argument("--threads", type=int, required=True)
    c.add_argument("--rounds", type=int, default=5)
    c.add_argument("--reps", type=int, default=10)
    c.add_argument("--proxy", action="store_true",
                   help="time the proxy forward too (what stood in before the kernels existed)")
    a = ap.parse_args()
    {"model": cmd_model, "time-ort": cmd_time_ort, "compare": cmd_compare}[a.cmd](a)


if __name__ == "__main__":
    main()
