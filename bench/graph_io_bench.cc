// graph-io-bench: how much reading, rewriting and writing a training graph through the IR costs
// over bare protobuf. The IR (docs/architecture.md §3) should rewrite a 1M-node graph in about as
// long as parsing and writing it, so the IR's own load and save must stay
// close to protobuf's (issue 2's goal: at most 1.3x), and the passes must add little (issue 3's
// goal: sharding-stage1 --nranks 8 and overlap add at most 0.3x the bare round trip, and ten times
// the nodes cost at most 11x the time).
//
// It writes a synthetic training graph (an MLP-like chain: forward MatMul/Add/Relu, backward, per
// parameter a gradient unscale (Mul by a shared constant, as mixed-precision training does) and an
// AdamW, names as exported models spell them, tiny initializers), then times, alternating, each
// run in a child process of its own (as each rewrite-graph run is a process), with the median of
// --reps repetitions each:
//   bare   read the file, ParseFromString into a heap ModelProto, SerializeToString, write it
//   arena  the same with the message on a protobuf Arena
//   ir     LoadModel, Verify (reported apart), SaveModel
// Every save writes a temporary file, fsyncs it and renames it into place, as SaveModel does, so
// the three pay for the same durability. Freeing the parsed model is timed apart from both.
//
// Then, in child processes too, on graphs loaded untimed, the rewrite as `rewrite-graph --nranks 8
// --overlap` does it: sharding-stage1, overlap, Verify, CheckHazards, each timed, for each
// --comm-buffer-mb given (the parameters are tiny, so the default 256 MiB makes one bucket of every
// parameter; a small limit makes thousands of buckets). Prints markdown tables (scripts/bench.sh
// puts them into docs/benchmarks.md).

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>
#include <CLI/CLI.hpp>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/layout_manifest.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"
#include "zerograph/passes/gradient_chain.h"
#include "zerograph/passes/hazard_check.h"
#include "zerograph/passes/overlap.h"
#include "zerograph/passes/sharding_stage1.h"

#include "bare_file_io.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// --- The synthetic training graph ------------------------------------------------------------

constexpr int64_t kWidth = 4;  // every activation is [kWidth, kWidth]: the bytes are not the point
constexpr int64_t kOpRoleForward = 0, kOpRoleBackward = 1, kOpRoleOptimize = 2, kLossBit = 256;

class SyntheticGraph {
 public:
  // `roles`: give every node `__op_role` (false leaves them to role inference).
  explicit SyntheticGraph(onnx::ModelProto& model, bool roles = true)
      : model_(model), graph_(*model.mutable_graph()), roles_(roles) {}

  onnx::NodeProto& Node(const std::string& op, const std::string& name,
                        std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs, int64_t role,
                        const std::string& domain = "") {
    onnx::NodeProto& node = *graph_.add_node();
    node.set_op_type(op);
    node.set_name(name);
    if (!domain.empty()) node.set_domain(domain);
    for (const std::string& input : inputs) node.add_input(input);
    for (const std::string& output : outputs) node.add_output(output);
    if (roles_) IntAttr(node, "__op_role", role);
    return node;
  }

  static void IntAttr(onnx::NodeProto& node, const std::string& name, int64_t value) {
    onnx::AttributeProto& attr = *node.add_attribute();
    attr.set_name(name);
    attr.set_type(onnx::AttributeProto::INT);
    attr.set_i(value);
  }
  static void FloatAttr(onnx::NodeProto& node, const std::string& name, float value) {
    onnx::AttributeProto& attr = *node.add_attribute();
    attr.set_name(name);
    attr.set_type(onnx::AttributeProto::FLOAT);
    attr.set_f(value);
  }

  void Initializer(const std::string& name, std::vector<int64_t> dims, float fill) {
    onnx::TensorProto& tensor = *graph_.add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    int64_t numel = 1;
    for (int64_t d : dims) {
      tensor.add_dims(d);
      numel *= d;
    }
    std::vector<float> values(static_cast<size_t>(numel), fill);
    tensor.set_raw_data(values.data(), values.size() * sizeof(float));
  }

  static void SetType(onnx::ValueInfoProto& info, const std::string& name, int32_t elem_type,
                      std::vector<int64_t> dims) {
    info.set_name(name);
    onnx::TypeProto::Tensor& tensor = *info.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(elem_type);
    onnx::TensorShapeProto& shape = *tensor.mutable_shape();
    for (int64_t d : dims) shape.add_dim()->set_dim_value(d);
  }
  void Input(const std::string& name, int32_t elem_type, std::vector<int64_t> dims) {
    SetType(*graph_.add_input(), name, elem_type, std::move(dims));
  }
  void Output(const std::string& name, std::vector<int64_t> dims) {
    SetType(*graph_.add_output(), name, onnx::TensorProto::FLOAT, std::move(dims));
  }

  void Metadata(const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto& entry = *model_.add_metadata_props();
    entry.set_key(key);
    entry.set_value(value);
  }

 private:
  onnx::ModelProto& model_;
  onnx::GraphProto& graph_;
  bool roles_;
};

// Builds a training graph of about `target_nodes` nodes: L layers of 3 forward, 6 backward (3 on
// the first layer) and 4 optimizer nodes, plus 4 for the loss.
//
//   a[i] = Relu(MatMul(a[i-1], W[i]) + b[i])            loss = ReduceMean((a[L-1] - y)^2)
//   dz[i] = ReluGrad(da[i], a[i]); db[i] = ReduceSum(dz[i]); dW[i] = a[i-1]^T @ dz[i];
//   da[i-1] = dz[i] @ W[i]^T;      per parameter: g = Mul(grad, grad.scale); AdamW(g)
//
// The unscale Mul is gradient post-processing (role optimizer): the chain the overlap pass moves
// up to its backward op, and a constant that every chain reads.
void BuildTrainingGraph(int64_t target_nodes, bool training_metadata, onnx::ModelProto& model) {
  const int64_t layers = std::max<int64_t>(1, (target_nodes - 1 + 6) / 13);
  model.set_ir_version(8);
  model.set_producer_name("graph-io-bench");
  model.add_opset_import()->set_version(13);
  onnx::OperatorSetIdProto& ours = *model.add_opset_import();
  ours.set_domain("org.zerograph");
  ours.set_version(1);
  model.mutable_graph()->set_name("synthetic_mlp");
  SyntheticGraph g(model);
  const std::vector<int64_t> square = {kWidth, kWidth};
  const std::vector<int64_t> row = {kWidth};

  g.Input("input_ids", onnx::TensorProto::FLOAT, square);
  g.Input("labels", onnx::TensorProto::FLOAT, square);
  g.Input("learning_rate", onnx::TensorProto::FLOAT, {});
  g.Input("step", onnx::TensorProto::INT64, {});
  g.Output("loss", {});

  auto prefix = [](int64_t i) { return StrCat("model.layers.", i, ".mlp.fc"); };
  auto node_prefix = [](int64_t i) { return StrCat("/model/layers.", i, "/mlp/fc/"); };
  std::vector<std::string> activations;  // a[i]
  activations.reserve(static_cast<size_t>(layers));
  std::string state_binding = "{";
  std::string previous = "input_ids";
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = prefix(i), n = node_prefix(i);
    for (const char* param : {".weight", ".bias"}) {
      const std::vector<int64_t>& dims = param[1] == 'w' ? square : row;
      g.Initializer(p + param, dims, 0.01f);
      g.Initializer(p + param + ".moment1", dims, 0.0f);
      g.Initializer(p + param + ".moment2", dims, 0.0f);
      for (const char* state : {"", ".moment1", ".moment2"}) {
        const std::string name = StrCat(p, param, state);
        g.Output(name + ".new", dims);
        if (state_binding.size() > 1) state_binding += ", ";
        state_binding += StrCat("\"", name, ".new\": \"", name, "\"");
      }
    }
    g.Node("MatMul", n + "MatMul", {previous, p + ".weight"}, {n + "MatMul_output_0"},
           kOpRoleForward);
    g.Node("Add", n + "Add", {n + "MatMul_output_0", p + ".bias"}, {n + "Add_output_0"},
           kOpRoleForward);
    g.Node("Relu", n + "Relu", {n + "Add_output_0"}, {n + "Relu_output_0"}, kOpRoleForward);
    previous = n + "Relu_output_0";
    activations.push_back(previous);
  }
  state_binding += "}";

  g.Initializer("loss.scale", {}, 2.0f / (kWidth * kWidth));
  g.Initializer("grad.scale", {}, 1.0f);
  onnx::TensorProto& axes = *model.mutable_graph()->add_initializer();
  axes.set_name("reduce.axes");
  axes.set_data_type(onnx::TensorProto::INT64);
  axes.add_dims(1);
  axes.add_int64_data(0);

  g.Node("Sub", "/loss/Sub", {previous, "labels"}, {"/loss/Sub_output_0"}, kOpRoleForward);
  g.Node("Mul", "/loss/Mul", {"/loss/Sub_output_0", "/loss/Sub_output_0"}, {"/loss/Mul_output_0"},
         kOpRoleForward);
  SyntheticGraph::IntAttr(g.Node("ReduceMean", "/loss/ReduceMean", {"/loss/Mul_output_0"}, {"loss"},
                                 kOpRoleForward | kLossBit),
                          "keepdims", 0);
  std::string grad = activations.back() + "@GRAD";
  g.Node("Mul", "/loss/Mul_grad", {"/loss/Sub_output_0", "loss.scale"}, {grad}, kOpRoleBackward);

  std::vector<std::string> grads(static_cast<size_t>(layers) * 2);
  for (int64_t i = layers - 1; i >= 0; --i) {
    const std::string p = prefix(i), n = node_prefix(i) + "grad/";
    const std::string input = i > 0 ? activations[static_cast<size_t>(i - 1)] : "input_ids";
    const std::string dz = n + "Relu_grad_output_0";
    g.Node("ReluGrad", n + "ReluGrad", {grad, activations[static_cast<size_t>(i)]}, {dz},
           kOpRoleBackward, "org.zerograph");
    SyntheticGraph::IntAttr(g.Node("ReduceSum", n + "ReduceSum", {dz, "reduce.axes"},
                                   {p + ".bias@GRAD"}, kOpRoleBackward),
                            "keepdims", 0);
    g.Node("Transpose", n + "Transpose", {input}, {n + "Transpose_output_0"}, kOpRoleBackward);
    g.Node("MatMul", n + "MatMul", {n + "Transpose_output_0", dz}, {p + ".weight@GRAD"},
           kOpRoleBackward);
    if (i > 0) {
      g.Node("Transpose", n + "Transpose_1", {p + ".weight"}, {n + "Transpose_1_output_0"},
             kOpRoleBackward);
      grad = input + "@GRAD";
      g.Node("MatMul", n + "MatMul_1", {dz, n + "Transpose_1_output_0"}, {grad}, kOpRoleBackward);
    }
  }
  // Gradient post-processing for every parameter first, then every update, as Paddle orders them
  // (sharding-stage1 places a bucket's fused update before its first update node, which must then
  // come after the bucket's last gradient).
  for (int64_t i = 0; i < layers; ++i) {
    for (const char* param : {".weight", ".bias"}) {
      const std::string x = prefix(i) + param;
      g.Node("Mul", StrCat("/optimizer/unscale_", 2 * i + (param[1] == 'b')),
             {x + "@GRAD", "grad.scale"}, {x + "@GRAD.unscaled"}, kOpRoleOptimize);
    }
  }
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = prefix(i);
    for (const char* param : {".weight", ".bias"}) {
      const std::string x = p + param;
      const int64_t k = 2 * i + (param[1] == 'b');
      onnx::NodeProto& adam = g.Node(
          "AdamW", StrCat("/optimizer/AdamW_", k),
          {"learning_rate", "step", x, x + "@GRAD.unscaled", x + ".moment1", x + ".moment2"},
          {x + ".new", x + ".moment1.new", x + ".moment2.new"}, kOpRoleOptimize, "org.zerograph");
      SyntheticGraph::FloatAttr(adam, "beta1", 0.9f);
      SyntheticGraph::FloatAttr(adam, "beta2", 0.999f);
      SyntheticGraph::FloatAttr(adam, "epsilon", 1e-8f);
      SyntheticGraph::FloatAttr(adam, "weight_decay", 0.01f);
    }
  }

  if (!training_metadata) return;
  g.Metadata("zerograph.format_version", "1");
  g.Metadata("zerograph.loss", "loss");
  g.Metadata("zerograph.inputs",
             R"({"data": ["input_ids", "labels"], "lr": "learning_rate", "step": "step"})");
  g.Metadata("zerograph.state_binding", state_binding);
}

// Builds a training graph of the kind users bring from elsewhere (ONNX Runtime's optimizer graphs,
// hand-written ones), of about `target_nodes` nodes: standard ops only in forward and backward, no
// value_info, one multi-tensor AdamW over every parameter (4 and 16 elements), and gradient
// post-processing chains of 0 to 3 nodes (Identity, Cast, Mul by a constant), the length cycling
// over the parameters. `roles` gives every node `__op_role`; without it role inference must infer
// the shapes to tell the chains (optimizer) from the bias gradient's ReduceSum (backward). Per
// layer 3 forward, 8 backward and 3 chain nodes:
//
//   a[i] = Relu(MatMul(a[i-1], W[i]) + b[i])            loss = ReduceMean((a[L-1] - y)^2)
//   dz[i] = da[i] * Cast(a[i] > 0); db[i] = ReduceSum(dz[i]); dW[i] = a[i-1]^T @ dz[i];
//   da[i-1] = dz[i] @ W[i]^T
void BuildForeignTrainingGraph(int64_t target_nodes, bool roles, onnx::ModelProto& model) {
  const int64_t layers = std::max<int64_t>(1, (target_nodes - 5) / 14);
  model.set_ir_version(8);
  model.set_producer_name("graph-io-bench");
  model.add_opset_import()->set_version(13);
  onnx::OperatorSetIdProto& ours = *model.add_opset_import();
  ours.set_domain("org.zerograph");
  ours.set_version(1);
  model.mutable_graph()->set_name("foreign_mlp");
  SyntheticGraph g(model, roles);
  const std::vector<int64_t> square = {kWidth, kWidth};
  const std::vector<int64_t> row = {kWidth};

  g.Input("input", onnx::TensorProto::FLOAT, square);
  g.Input("target", onnx::TensorProto::FLOAT, square);
  g.Input("learning_rate", onnx::TensorProto::FLOAT, {});
  g.Input("step", onnx::TensorProto::INT64, {});
  g.Output("loss", {});

  std::vector<std::string> params, activations;
  std::vector<std::vector<int64_t>> param_dims;
  std::string previous = "input";
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = StrCat("layers.", i), n = StrCat("/layers.", i, "/");
    for (const char* param : {".weight", ".bias"}) {
      const std::vector<int64_t>& dims = param[1] == 'w' ? square : row;
      g.Initializer(p + param, dims, 0.01f);
      params.push_back(p + param);
      param_dims.push_back(dims);
    }
    g.Node("MatMul", n + "MatMul", {previous, p + ".weight"}, {n + "MatMul_output_0"},
           kOpRoleForward);
    g.Node("Add", n + "Add", {n + "MatMul_output_0", p + ".bias"}, {n + "Add_output_0"},
           kOpRoleForward);
    g.Node("Relu", n + "Relu", {n + "Add_output_0"}, {n + "Relu_output_0"}, kOpRoleForward);
    previous = n + "Relu_output_0";
    activations.push_back(previous);
  }
  g.Initializer("zero", {}, 0.0f);
  g.Initializer("loss.scale", {}, 2.0f / (kWidth * kWidth));
  g.Initializer("grad.scale", {}, 1.0f);
  onnx::TensorProto& axes = *model.mutable_graph()->add_initializer();
  axes.set_name("reduce.axes");
  axes.set_data_type(onnx::TensorProto::INT64);
  axes.add_dims(1);
  axes.add_int64_data(0);

  g.Node("Sub", "/loss/Sub", {previous, "target"}, {"/loss/Sub_output_0"}, kOpRoleForward);
  g.Node("Mul", "/loss/Mul", {"/loss/Sub_output_0", "/loss/Sub_output_0"}, {"/loss/Mul_output_0"},
         kOpRoleForward);
  SyntheticGraph::IntAttr(g.Node("ReduceMean", "/loss/ReduceMean", {"/loss/Mul_output_0"}, {"loss"},
                                 kOpRoleForward | kLossBit),
                          "keepdims", 0);
  std::string grad = activations.back() + "_grad";
  g.Node("Mul", "/loss/Mul_grad", {"/loss/Sub_output_0", "loss.scale"}, {grad}, kOpRoleBackward);

  // The gradient of parameter k, after its chain of k % 4 post-processing nodes.
  std::vector<std::string> grads(params.size());
  auto chain = [&](size_t k, std::string value) {
    for (size_t c = 1; c <= k % 4; ++c) {
      const std::string name = StrCat(params[k], "_grad.post", c);
      switch (c) {
        case 1:
          g.Node("Identity", name, {value}, {name}, kOpRoleOptimize);
          break;
        case 2:
          SyntheticGraph::IntAttr(g.Node("Cast", name, {value}, {name}, kOpRoleOptimize), "to",
                                  onnx::TensorProto::FLOAT);
          break;
        default:
          g.Node("Mul", name, {value, "grad.scale"}, {name}, kOpRoleOptimize);
      }
      value = name;
    }
    grads[k] = value;
  };
  for (int64_t i = layers - 1; i >= 0; --i) {
    const std::string p = StrCat("layers.", i), n = StrCat("/layers.", i, "/grad/");
    const std::string input = i > 0 ? activations[static_cast<size_t>(i - 1)] : "input";
    const std::string& a = activations[static_cast<size_t>(i)];
    g.Node("Greater", n + "Greater", {a, "zero"}, {n + "Greater_output_0"}, kOpRoleBackward);
    SyntheticGraph::IntAttr(g.Node("Cast", n + "Cast", {n + "Greater_output_0"},
                                   {n + "Cast_output_0"}, kOpRoleBackward),
                            "to", onnx::TensorProto::FLOAT);
    const std::string dz = n + "Mul_output_0";
    g.Node("Mul", n + "Mul", {grad, n + "Cast_output_0"}, {dz}, kOpRoleBackward);
    SyntheticGraph::IntAttr(g.Node("ReduceSum", n + "ReduceSum", {dz, "reduce.axes"},
                                   {p + ".bias_grad"}, kOpRoleBackward),
                            "keepdims", 0);
    g.Node("Transpose", n + "Transpose", {input}, {n + "Transpose_output_0"}, kOpRoleBackward);
    g.Node("MatMul", n + "MatMul", {n + "Transpose_output_0", dz}, {p + ".weight_grad"},
           kOpRoleBackward);
    g.Node("Transpose", n + "Transpose_1", {p + ".weight"}, {n + "Transpose_1_output_0"},
           kOpRoleBackward);
    grad = input + "_grad";
    g.Node("MatMul", n + "MatMul_1", {dz, n + "Transpose_1_output_0"}, {grad}, kOpRoleBackward);
  }

  // Post-processing after the whole backward, as ONNX Runtime and Paddle place it: the overlap
  // pass moves each chain up to its backward op.
  for (size_t k = 0; k < params.size(); ++k) chain(k, params[k] + "_grad");
  // One update over every parameter: AdamW(lr, step, X..., G..., M..., V...).
  onnx::NodeProto& adam = *model.mutable_graph()->add_node();
  adam.set_op_type("AdamW");
  adam.set_domain("org.zerograph");
  adam.set_name("/optimizer/AdamW");
  adam.add_input("learning_rate");
  adam.add_input("step");
  for (const std::string& x : params) adam.add_input(x);
  for (const std::string& gradient : grads) adam.add_input(gradient);
  std::string state_binding = "{";
  auto bind = [&](const std::string& name) {
    if (state_binding.size() > 1) state_binding += ", ";
    state_binding += StrCat("\"", name, ".new\": \"", name, "\"");
  };
  for (const char* state : {".moment1", ".moment2"}) {
    for (size_t k = 0; k < params.size(); ++k) {
      g.Initializer(params[k] + state, param_dims[k], 0.0f);
      adam.add_input(params[k] + state);
    }
  }
  for (const char* state : {"", ".moment1", ".moment2"}) {
    for (size_t k = 0; k < params.size(); ++k) {
      const std::string name = params[k] + state;
      adam.add_output(name + ".new");
      g.Output(name + ".new", param_dims[k]);
      bind(name);
    }
  }
  state_binding += "}";
  if (roles) SyntheticGraph::IntAttr(adam, "__op_role", kOpRoleOptimize);
  SyntheticGraph::FloatAttr(adam, "beta1", 0.9f);
  SyntheticGraph::FloatAttr(adam, "beta2", 0.999f);
  SyntheticGraph::FloatAttr(adam, "epsilon", 1e-8f);
  SyntheticGraph::FloatAttr(adam, "weight_decay", 0.01f);

  g.Metadata("zerograph.format_version", "1");
  g.Metadata("zerograph.loss", "loss");
  g.Metadata("zerograph.inputs",
             R"({"data": ["input", "target"], "lr": "learning_rate", "step": "step"})");
  g.Metadata("zerograph.state_binding", state_binding);
}

// --- Timing ------------------------------------------------------------------------------------

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the process so far, every thread's: the IR parses and serializes on several threads,
// bare protobuf on one.
double CpuSeconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Sample {
  double load = 0;     // read + parse, or LoadModel
  double verify = 0;   // Verify (IR only)
  double save = 0;     // serialize + write + fsync + rename, or SaveModel
  double free = 0;     // destroying the parsed model or the graph
  double cpu = 0;      // CPU time of load and save, every thread's
  double peak_mb = 0;  // peak resident memory of the child process
};

// Peak resident memory of this process so far, in MB.
double PeakMb() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;
}

StatusOr<Sample> RunBare(const std::string& in, const std::string& out, bool use_arena) {
  Sample sample;
  const double cpu_start = CpuSeconds();
  Clock::time_point start = Clock::now();
  std::string bytes;
  ZG_RETURN_IF_NOT(bench::ReadWholeFile(in, bytes), "cannot read '", in, "'");
  std::unique_ptr<google::protobuf::Arena> arena;
  std::unique_ptr<onnx::ModelProto> heap_model;
  onnx::ModelProto* model;
  if (use_arena) {
    arena = std::make_unique<google::protobuf::Arena>();
    model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(arena.get());
  } else {
    heap_model = std::make_unique<onnx::ModelProto>();
    model = heap_model.get();
  }
  ZG_RETURN_IF_NOT(model->ParseFromString(bytes), "cannot parse '", in, "'");
  sample.load = SecondsSince(start);

  start = Clock::now();
  std::string serialized;
  ZG_RETURN_IF_NOT(model->SerializeToString(&serialized), "cannot serialize");
  ZG_RETURN_IF_NOT(bench::WriteFileDurably(out, serialized), "cannot write '", out, "'");
  sample.save = SecondsSince(start);
  sample.cpu = CpuSeconds() - cpu_start;
  sample.peak_mb = PeakMb();

  start = Clock::now();
  heap_model.reset();
  arena.reset();
  bytes = std::string();
  serialized = std::string();
  sample.free = SecondsSince(start);
  return sample;
}

StatusOr<Sample> RunIr(const std::string& in, const std::string& out) {
  Sample sample;
  double cpu_start = CpuSeconds();
  Clock::time_point start = Clock::now();
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(in));
  sample.load = SecondsSince(start);
  sample.cpu = CpuSeconds() - cpu_start;

  start = Clock::now();
  ZG_RETURN_IF_ERROR(Verify(*graph));
  sample.verify = SecondsSince(start);

  cpu_start = CpuSeconds();
  start = Clock::now();
  ZG_RETURN_IF_ERROR(SaveModel(*graph, out));
  sample.save = SecondsSince(start);
  sample.cpu += CpuSeconds() - cpu_start;
  sample.peak_mb = PeakMb();

  start = Clock::now();
  graph.reset();
  sample.free = SecondsSince(start);
  return sample;
}

// One rewrite of a freshly loaded graph, as rewrite-graph --nranks N --overlap does it.
struct PassSample {
  double sharding = 0;
  double overlap = 0;
  double verify = 0;   // Verify after the passes
  double hazards = 0;  // CheckHazards
  double total() const { return sharding + overlap + verify + hazards; }
  double passes_cpu = 0;  // CPU time of sharding-stage1 and overlap, every thread's
  int64_t buckets = 0;
  int64_t nodes_after = 0;
  double peak_mb = 0;  // peak resident memory of the child process
};

StatusOr<PassSample> RunPasses(const std::string& in, int64_t nranks, double comm_buffer_mb,
                               LayoutManifest::Alignment align) {
  PassSample sample;
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(in));
  ShardingStage1Pass sharding(
      ShardingStage1Pass::Options{.nranks = nranks,
                                  .comm_buffer_mb = comm_buffer_mb,
                                  .bucket_order = BucketOrder::kGradientReady,
                                  .align = align});
  OverlapPass overlap;
  GradientChainHandoff chain_handoff;
  sharding.HandOffChains(&chain_handoff);
  overlap.TakeChainsFrom(&chain_handoff);

  const double cpu_start = CpuSeconds();
  Clock::time_point start = Clock::now();
  ZG_RETURN_IF_ERROR(sharding.Run(*graph).status());
  sample.sharding = SecondsSince(start);
  start = Clock::now();
  ZG_RETURN_IF_ERROR(overlap.Run(*graph).status());
  sample.overlap = SecondsSince(start);
  sample.passes_cpu = CpuSeconds() - cpu_start;
  start = Clock::now();
  ZG_RETURN_IF_ERROR(Verify(*graph));
  sample.verify = SecondsSince(start);
  start = Clock::now();
  ZG_RETURN_IF_ERROR(CheckHazards(*graph));
  sample.hazards = SecondsSince(start);

  sample.buckets = static_cast<int64_t>(sharding.layout().buckets.size());
  sample.nodes_after = static_cast<int64_t>(graph->num_nodes());
  sample.peak_mb = PeakMb();
  return sample;
}

// Runs one sample in a child process, as each run of rewrite-graph is one: every variant starts
// from a fresh heap. In one process, the state one variant leaves the allocator in changes the
// next one's time (the IR's threads leave memory in per-thread malloc arenas, and the bare save
// that followed took up to twice as long).
template <typename T>
StatusOr<T> InChildProcess(const std::function<StatusOr<T>()>& run) {
  static_assert(std::is_trivially_copyable_v<T>, "sent through a pipe as bytes");
  int fds[2];
  ZG_RETURN_IF_NOT(::pipe(fds) == 0, "cannot create a pipe");
  std::cout.flush();
  std::cerr.flush();
  // What this process freed goes back to the system, so that the child does not write into pages
  // it shares with this one (each write would copy a page).
  ::malloc_trim(0);
  const pid_t pid = ::fork();
  ZG_RETURN_IF_NOT(pid >= 0, "cannot fork");
  if (pid == 0) {
    ::close(fds[0]);
    StatusOr<T> sample = run();
    if (!sample.ok()) std::cerr << "error: " << sample.status().message() << "\n";
    const bool sent = sample.ok() && ::write(fds[1], &*sample, sizeof(T)) == sizeof(T);
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  T sample;
  const bool received = ::read(fds[0], &sample, sizeof(T)) == sizeof(T);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ZG_RETURN_IF_NOT(received && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                   "a benchmark child process failed");
  return sample;
}

// Touches `bytes` of fresh memory in a child process and frees it, so that the next run starts
// with that much memory the host has backed. Why: in this VM (free page reporting to the host is
// on), a first touch of memory the host took back costs several times a plain first touch (2.5
// GB: 8.5 s against 1.8 s), and the guest hands a new process the pages the last one freed first;
// so a run paid for the part of its peak above its predecessor's, and a ratio depended on the order
// of the runs (at 1M nodes the bare round trip took 1.52-1.56 s after a larger process
// and 1.83-7.83 s after smaller ones, 2026-12-05). Touching more than any variant's peak before
// each run removes the order.
Status SettleMemory(size_t bytes) {
  return InChildProcess<bool>([bytes]() -> StatusOr<bool> {
           void* block =
               ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
           ZG_RETURN_IF_NOT(block != MAP_FAILED, "cannot map ", bytes >> 20,
                            " MiB to settle the memory between runs");
           const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
           for (size_t at = 0; at < bytes; at += page) static_cast<volatile char*>(block)[at] = 1;
           return true;
         })
      .status();
}

// One run of a program (rewrite-graph), measured as the shell's `time` would: wall time, CPU time
// of all its threads (user + system) and peak resident memory, from wait4.
struct ProgramSample {
  double wall = 0, cpu = 0, system = 0, peak_mb = 0;
};

StatusOr<ProgramSample> RunProgram(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const Clock::time_point start = Clock::now();
  const pid_t pid = ::fork();
  ZG_RETURN_IF_NOT(pid >= 0, "cannot fork");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ZG_RETURN_IF_NOT(::wait4(pid, &status, 0, &usage) == pid, "cannot wait for ", args[0]);
  ProgramSample sample;
  sample.wall = SecondsSince(start);
  ZG_RETURN_IF_NOT(WIFEXITED(status) && WEXITSTATUS(status) == 0, args[0], " failed (status ",
                   status, ")");
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  sample.system = seconds(usage.ru_stime);
  sample.cpu = seconds(usage.ru_utime) + sample.system;
  sample.peak_mb = static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;
  return sample;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Medians {
  double load, verify, save, free, round_trip, cpu, peak_mb;
};

Medians MedianOf(const std::vector<Sample>& samples) {
  std::vector<double> load, verify, save, free, round_trip, cpu, peak_mb;
  for (const Sample& s : samples) {
    load.push_back(s.load);
    verify.push_back(s.verify);
    save.push_back(s.save);
    free.push_back(s.free);
    round_trip.push_back(s.load + s.save);
    cpu.push_back(s.cpu);
    peak_mb.push_back(s.peak_mb);
  }
  return {Median(load),       Median(verify), Median(save),   Median(free),
          Median(round_trip), Median(cpu),    Median(peak_mb)};
}

ProgramSample MedianOf(const std::vector<ProgramSample>& samples) {
  std::vector<double> wall, cpu, system, peak_mb;
  for (const ProgramSample& s : samples) {
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
    system.push_back(s.system);
    peak_mb.push_back(s.peak_mb);
  }
  return {Median(wall), Median(cpu), Median(system), Median(peak_mb)};
}

struct PassMedians {
  double comm_buffer_mb = 0;
  int reps = 0;
  int64_t buckets = 0;
  int64_t nodes_after = 0;
  double sharding = 0, overlap = 0, verify = 0, hazards = 0, total = 0, passes_cpu = 0;
};

PassMedians MedianOf(double comm_buffer_mb, const std::vector<PassSample>& samples) {
  PassMedians m;
  m.comm_buffer_mb = comm_buffer_mb;
  m.reps = static_cast<int>(samples.size());
  m.buckets = samples.front().buckets;
  m.nodes_after = samples.front().nodes_after;
  std::vector<double> sharding, overlap, verify, hazards, total, passes_cpu;
  for (const PassSample& s : samples) {
    passes_cpu.push_back(s.passes_cpu);
    sharding.push_back(s.sharding);
    overlap.push_back(s.overlap);
    verify.push_back(s.verify);
    hazards.push_back(s.hazards);
    total.push_back(s.total());
  }
  m.sharding = Median(sharding);
  m.overlap = Median(overlap);
  m.verify = Median(verify);
  m.hazards = Median(hazards);
  m.total = Median(total);
  m.passes_cpu = Median(passes_cpu);
  return m;
}

struct SizeResult {
  int64_t nodes = 0;
  int64_t initializers = 0;
  double file_mb = 0;
  int reps = 0;  // timed repetitions done
  Medians bare{}, arena{}, ir{};
  std::vector<PassMedians> passes;  // one per --comm-buffer-mb
  // Programs, each timed from fork to exit: bare-round-trip, and rewrite-graph IN -o OUT (load,
  // verify, save) and with --nranks N --overlap.
  bool programs = false;
  ProgramSample bare_program{}, copy{}, rewrite{};
  double largest_peak_mb = 0;  // of every run at this size
};

enum class GraphKind { kMlp, kForeign, kForeignWithRoles };

struct BenchOptions {
  GraphKind graph = GraphKind::kMlp;
  std::string rewrite_graph;    // the program's path; empty: not run
  std::string bare_round_trip;  // the baseline program's path, given with rewrite_graph
  std::vector<int64_t> nodes = {100000, 1000000};
  int reps = 5;
  double budget_s = 900;
  bool no_training_metadata = false;
  bool no_passes = false;
  int64_t nranks = 8;
  std::string align = "seed";  // rewrite-graph's --align
  std::vector<double> comm_buffer_mb = {256};
  std::string dir;
  bool keep_files = false;
  bool settle_memory = true;  // SettleMemory before each timed run
};

std::string Ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", seconds * 1e3);
  return text;
}
std::string Fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

StatusOr<SizeResult> BenchOneSize(int64_t target_nodes, const BenchOptions& options,
                                  const fs::path& dir) {
  const int reps = options.reps;
  const double budget_s = options.budget_s;
  const bool training_metadata = !options.no_training_metadata;
  const std::string in = (dir / StrCat("synthetic_", target_nodes, ".onnx")).string();
  const std::string out = (dir / StrCat("synthetic_", target_nodes, ".out.onnx")).string();
  // The graph is built in a child process too, so that the parent holds none of the model's
  // memory while it forks the variants.
  struct GraphFile {
    int64_t nodes = 0, initializers = 0;
    double file_mb = 0;
  };
  ZG_ASSIGN_OR_RETURN(
      const GraphFile file, InChildProcess<GraphFile>([&]() -> StatusOr<GraphFile> {
        onnx::ModelProto model;
        if (options.graph == GraphKind::kMlp) {
          BuildTrainingGraph(target_nodes, training_metadata, model);
        } else {
          BuildForeignTrainingGraph(target_nodes, options.graph == GraphKind::kForeignWithRoles,
                                    model);
        }
        std::string bytes;
        ZG_RETURN_IF_NOT(model.SerializeToString(&bytes), "cannot serialize the synthetic graph");
        ZG_RETURN_IF_NOT(bench::WriteFileDurably(in, bytes), "cannot write '", in, "'");
        return GraphFile{model.graph().node_size(), model.graph().initializer_size(),
                         static_cast<double>(bytes.size()) / 1e6};
      }));
  SizeResult result;
  result.nodes = file.nodes;
  result.initializers = file.initializers;
  result.file_mb = file.file_mb;
  std::cerr << "graph-io-bench: " << result.nodes << " nodes, " << result.initializers
            << " initializers, " << Fixed(result.file_mb, 1) << " MB; " << reps
            << " repetitions of bare, arena, ir\n";

  // One untimed pass of each warms the page cache and checks the graph loads.
  ZG_ASSIGN_OR_RETURN(const Sample bare_warm_up,
                      InChildProcess<Sample>([&] { return RunBare(in, out, false); }));
  ZG_ASSIGN_OR_RETURN(const Sample ir_warm_up,
                      InChildProcess<Sample>([&] { return RunIr(in, out); }));
  // Half again the largest peak seen so far is touched before each timed run (SettleMemory).
  auto note_peak = [&result](double peak_mb) {
    result.largest_peak_mb = std::max(result.largest_peak_mb, peak_mb);
  };
  note_peak(bare_warm_up.peak_mb);
  note_peak(ir_warm_up.peak_mb);
  // Before each timed run the output is removed, untimed: replacing a file costs its size in
  // unlinking (about 80 ms for 404 MB on ext4 with `discard`), which would bill each run for the
  // output of the variant before it.
  auto before_timed_run = [&]() -> Status {
    std::error_code ignored;
    fs::remove(out, ignored);
    if (!options.settle_memory) return Status::Ok();
    return SettleMemory(static_cast<size_t>(1.5 * result.largest_peak_mb * 1e6));
  };

  const std::vector<std::string> copy_args = {options.rewrite_graph, in, "-o", out};
  const std::vector<std::string> rewrite_args = {
      options.rewrite_graph,  in,          "-o",      out,          "--nranks",
      StrCat(options.nranks), "--overlap", "--align", options.align};
  const std::vector<std::string> bare_program_args = {options.bare_round_trip, in, out};
  result.programs = !options.rewrite_graph.empty();
  const int variants = result.programs ? 6 : 3;
  std::vector<Sample> bare, arena, ir;
  std::vector<ProgramSample> bare_program, copy, rewrite;
  const Clock::time_point timed_start = Clock::now();
  for (int rep = 0; rep < reps; ++rep) {
    // A pathologically slow variant would take hours at 1M nodes: stop at the budget, and say so.
    if (rep > 0 && SecondsSince(timed_start) > budget_s) {
      std::cerr << "  over the budget of " << budget_s << " s: stopping after " << rep
                << " repetitions\n";
      break;
    }
    // Rotate the order so that no variant always runs first.
    for (int k = 0; k < variants; ++k) {
      ZG_RETURN_IF_ERROR(before_timed_run());
      switch ((rep + k) % variants) {
        case 0: {
          ZG_ASSIGN_OR_RETURN(Sample s,
                              InChildProcess<Sample>([&] { return RunBare(in, out, false); }));
          bare.push_back(s);
          note_peak(s.peak_mb);
          break;
        }
        case 1: {
          ZG_ASSIGN_OR_RETURN(Sample s,
                              InChildProcess<Sample>([&] { return RunBare(in, out, true); }));
          arena.push_back(s);
          note_peak(s.peak_mb);
          break;
        }
        case 2: {
          ZG_ASSIGN_OR_RETURN(Sample s, InChildProcess<Sample>([&] { return RunIr(in, out); }));
          ir.push_back(s);
          note_peak(s.peak_mb);
          break;
        }
        case 3: {
          ZG_ASSIGN_OR_RETURN(ProgramSample s, RunProgram(bare_program_args));
          bare_program.push_back(s);
          note_peak(s.peak_mb);
          break;
        }
        case 4: {
          ZG_ASSIGN_OR_RETURN(ProgramSample s, RunProgram(copy_args));
          copy.push_back(s);
          note_peak(s.peak_mb);
          break;
        }
        default: {
          ZG_ASSIGN_OR_RETURN(ProgramSample s, RunProgram(rewrite_args));
          rewrite.push_back(s);
          note_peak(s.peak_mb);
          break;
        }
      }
    }
    std::cerr << "  repetition " << rep + 1 << "/" << reps << ": bare "
              << Ms(bare.back().load + bare.back().save) << " ms, arena "
              << Ms(arena.back().load + arena.back().save) << " ms, ir "
              << Ms(ir.back().load + ir.back().save) << " ms\n";
  }
  result.reps = static_cast<int>(ir.size());
  result.bare = MedianOf(bare);
  result.arena = MedianOf(arena);
  result.ir = MedianOf(ir);
  if (result.programs) {
    result.bare_program = MedianOf(bare_program);
    result.copy = MedianOf(copy);
    result.rewrite = MedianOf(rewrite);
  }

  if (training_metadata && !options.no_passes) {
    for (double limit : options.comm_buffer_mb) {
      std::vector<PassSample> samples;
      const Clock::time_point passes_start = Clock::now();
      for (int rep = 0; rep < reps; ++rep) {
        if (rep > 0 && SecondsSince(passes_start) > budget_s) {
          std::cerr << "  over the budget of " << budget_s << " s: stopping after " << rep
                    << " repetitions\n";
          break;
        }
        ZG_RETURN_IF_ERROR(before_timed_run());
        ZG_ASSIGN_OR_RETURN(PassSample sample, InChildProcess<PassSample>([&] {
                              return RunPasses(in, options.nranks, limit,
                                               *AlignmentFromName(options.align));
                            }));
        std::cerr << "  passes, --comm-buffer-mb " << limit << ", repetition " << rep + 1 << "/"
                  << reps << ": " << sample.buckets << " buckets, " << Ms(sample.total())
                  << " ms\n";
        note_peak(sample.peak_mb);
        samples.push_back(sample);
      }
      result.passes.push_back(MedianOf(limit, samples));
    }
  }
  if (!options.keep_files) {
    std::error_code ignored;
    fs::remove(in, ignored);
    fs::remove(out, ignored);
  }
  return result;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

// The rewrite's tables: time per pass against the bare round trip measured in the same run, then
// how the time grows with the graph (issue 3: ten times the nodes, at most 11x the time).
void PrintPassTables(const std::vector<SizeResult>& results, int64_t nranks,
                     const std::string& align) {
  bool any = false;
  for (const SizeResult& r : results) any = any || !r.passes.empty();
  if (!any) return;
  std::cout << "\nThe rewrite, as `rewrite-graph --nranks " << nranks << " --overlap --align "
            << align
            << "` runs it, on the graph loaded untimed; milliseconds, medians. Passes = "
               "sharding-stage1 + overlap; rewrite = passes + Verify + CheckHazards (what "
               "rewrite-graph runs between load and save). The passes run on up to "
            << std::min(8u, std::max(1u, std::thread::hardware_concurrency()))
            << " threads here (parts of them): the last column compares CPU time.\n\n";
  std::cout << "| nodes | --comm-buffer-mb | buckets | nodes after | reps | sharding-stage1 | "
               "overlap | Verify | CheckHazards | rewrite | passes / bare round trip | "
               "rewrite / bare round trip | CPU of passes / of bare round trip |\n"
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SizeResult& r : results) {
    for (const PassMedians& p : r.passes) {
      std::cout << "| " << r.nodes << " | " << Number(p.comm_buffer_mb) << " | " << p.buckets
                << " | " << p.nodes_after << " | " << p.reps << " | " << Ms(p.sharding) << " | "
                << Ms(p.overlap) << " | " << Ms(p.verify) << " | " << Ms(p.hazards) << " | "
                << Ms(p.total) << " | **" << Fixed((p.sharding + p.overlap) / r.bare.round_trip, 2)
                << "x** | " << Fixed(p.total / r.bare.round_trip, 2) << "x | "
                << Fixed(p.passes_cpu / r.bare.cpu, 2) << "x |\n";
    }
  }
  if (results.size() < 2) return;
  std::cout << "\nGrowth from the smallest size to each larger one (linear: the time ratio equals "
               "the node ratio; issue 3 allows 11x for 10x the nodes):\n\n"
               "| nodes | --comm-buffer-mb | node ratio | passes time ratio | rewrite time ratio | "
               "bare round trip ratio |\n"
               "|---:|---:|---:|---:|---:|---:|\n";
  const SizeResult& base = results.front();
  for (size_t i = 1; i < results.size(); ++i) {
    const SizeResult& r = results[i];
    for (size_t k = 0; k < r.passes.size() && k < base.passes.size(); ++k) {
      const PassMedians& p = r.passes[k];
      const PassMedians& b = base.passes[k];
      std::cout << "| " << r.nodes << " | " << Number(p.comm_buffer_mb) << " | "
                << Fixed(static_cast<double>(r.nodes) / static_cast<double>(base.nodes), 1)
                << " | **" << Fixed((p.sharding + p.overlap) / (b.sharding + b.overlap), 1)
                << "x** | " << Fixed(p.total / b.total, 1) << "x | "
                << Fixed(r.bare.round_trip / base.bare.round_trip, 1) << "x |\n";
    }
  }
}

void PrintTables(const std::vector<SizeResult>& results, bool settled) {
  std::cout << "Milliseconds, median of the timed repetitions (column reps) of each variant, "
               "run alternating, each run in a child process of its own (a fresh heap). "
            << (settled ? "Before each timed run, a child process touches and frees 1.5x the "
                          "largest peak seen (SettleMemory: in this VM a run otherwise pays for "
                          "the part of its peak above its predecessor's). "
                        : "Memory is not settled between runs (--no-settle-memory). ")
            << "Save = serialize + write + fsync + rename in "
               "every column. Round trip = load + save; freeing the model is timed apart. Times "
               "are wall-clock; the IR parses and serializes on up to "
            << std::min(8u, std::max(1u, std::thread::hardware_concurrency()))
            << " threads here, bare protobuf on one: the last column compares CPU time.\n\n";
  std::cout
      << "| nodes | initializers | file MB | reps | bare load | bare save | bare round trip | "
         "bare free | arena load | arena save | arena round trip | arena free |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SizeResult& r : results) {
    std::cout << "| " << r.nodes << " | " << r.initializers << " | " << Fixed(r.file_mb, 1) << " | "
              << r.reps << " | " << Ms(r.bare.load) << " | " << Ms(r.bare.save) << " | "
              << Ms(r.bare.round_trip) << " | " << Ms(r.bare.free) << " | " << Ms(r.arena.load)
              << " | " << Ms(r.arena.save) << " | " << Ms(r.arena.round_trip) << " | "
              << Ms(r.arena.free) << " |\n";
  }
  std::cout << "\n| nodes | IR load | IR verify | IR save | IR load+save | IR free | "
               "(IR load+save) / bare round trip | / arena round trip | IR load MB/s | "
               "CPU of IR load+save / of bare round trip |\n"
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SizeResult& r : results) {
    std::cout << "| " << r.nodes << " | " << Ms(r.ir.load) << " | " << Ms(r.ir.verify) << " | "
              << Ms(r.ir.save) << " | " << Ms(r.ir.round_trip) << " | " << Ms(r.ir.free) << " | **"
              << Fixed(r.ir.round_trip / r.bare.round_trip, 2) << "x** | "
              << Fixed(r.ir.round_trip / r.arena.round_trip, 2) << "x | "
              << Fixed(r.file_mb / r.ir.load, 0) << " | " << Fixed(r.ir.cpu / r.bare.cpu, 2)
              << "x |\n";
  }
}

// rewrite-graph itself against the bare round trip of the same file, run alternating with it:
// wall time, CPU time and peak resident memory (issue 16's goals: load + save at most 1.0x, the
// rewrite at most 1.3x the bare round trip's time, peak memory at most the bare round trip's).
// The baseline is the round trip as a program (bare-round-trip), timed from fork to exit as
// rewrite-graph is; the round trip timed inside a child process leaves out starting the program
// and the kernel dropping its memory at exit, which rewrite-graph's time includes, and is shown
// beside it.
void PrintProgramTables(const std::vector<SizeResult>& results, int64_t nranks,
                        const std::string& align) {
  bool any = false;
  for (const SizeResult& r : results) any = any || r.programs;
  if (!any) return;
  std::cout
      << "\n`bare-round-trip IN OUT` (the bare round trip as a program), `rewrite-graph IN -o "
         "OUT` (load, verify, save) and `rewrite-graph IN -o OUT --nranks "
      << nranks << " --overlap --align " << align
      << "`, each a process of its own timed from fork to exit; medians. / bare = against "
         "bare-round-trip; / in-child = against the bare round trip timed inside a child "
         "process (the table above), which leaves out the program's start and exit. CPU = "
         "user + system of every thread; peak = the process's maximum resident set.\n\n"
         "| nodes | bare round trip in-child ms | bare-round-trip ms | bare CPU ms (sys) | bare "
         "peak MB | copy ms | copy / bare | copy / in-child | copy CPU ms (sys) | copy peak MB "
         "| rewrite ms | rewrite / bare | rewrite / in-child | rewrite CPU ms (sys) | rewrite "
         "peak MB | rewrite peak / bare |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SizeResult& r : results) {
    if (!r.programs) continue;
    const ProgramSample& bare = r.bare_program;
    std::cout << "| " << r.nodes << " | " << Ms(r.bare.round_trip) << " | " << Ms(bare.wall)
              << " | " << Ms(bare.cpu) << " (" << Ms(bare.system) << ") | "
              << Fixed(bare.peak_mb, 0) << " | " << Ms(r.copy.wall) << " | **"
              << Fixed(r.copy.wall / bare.wall, 2) << "x** | "
              << Fixed(r.copy.wall / r.bare.round_trip, 2) << "x | " << Ms(r.copy.cpu) << " ("
              << Ms(r.copy.system) << ") | " << Fixed(r.copy.peak_mb, 0) << " | "
              << Ms(r.rewrite.wall) << " | **" << Fixed(r.rewrite.wall / bare.wall, 2) << "x** | "
              << Fixed(r.rewrite.wall / r.bare.round_trip, 2) << "x | " << Ms(r.rewrite.cpu) << " ("
              << Ms(r.rewrite.system) << ") | " << Fixed(r.rewrite.peak_mb, 0) << " | **"
              << Fixed(r.rewrite.peak_mb / bare.peak_mb, 2) << "x** |\n";
  }
  if (results.size() < 2 || !results.front().programs) return;
  const SizeResult& base = results.front();
  std::cout << "\nGrowth of rewrite-graph --nranks " << nranks
            << " --overlap from the smallest size (issue 16 allows 11x for 10x the nodes):\n\n"
               "| nodes | node ratio | rewrite time ratio | bare-round-trip time ratio |\n"
               "|---:|---:|---:|---:|\n";
  for (size_t i = 1; i < results.size(); ++i) {
    const SizeResult& r = results[i];
    std::cout << "| " << r.nodes << " | "
              << Fixed(static_cast<double>(r.nodes) / static_cast<double>(base.nodes), 1) << " | **"
              << Fixed(r.rewrite.wall / base.rewrite.wall, 1) << "x** | "
              << Fixed(r.bare_program.wall / base.bare_program.wall, 1) << "x |\n";
  }
}

// The largest peak of the runs, not of every child: SettleMemory's touch more.
void PrintPeakMemory(const std::vector<SizeResult>& results) {
  double largest_peak_mb = 0;
  for (const SizeResult& r : results)
    largest_peak_mb = std::max(largest_peak_mb, r.largest_peak_mb);
  std::cout << "\nPeak resident memory of the largest run: " << Fixed(largest_peak_mb / 1.048576, 0)
            << " MiB.\n";
}

Status RunBench(const BenchOptions& options) {
  fs::path dir = options.dir.empty() ? fs::temp_directory_path() : fs::path(options.dir);
  std::vector<SizeResult> results;
  for (int64_t nodes : options.nodes) {
    ZG_ASSIGN_OR_RETURN(SizeResult result, BenchOneSize(nodes, options, dir));
    results.push_back(result);
  }
  PrintTables(results, options.settle_memory);
  PrintPassTables(results, options.nranks, options.align);
  PrintProgramTables(results, options.nranks, options.align);
  PrintPeakMemory(results);
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app(
      "Times loading, rewriting (sharding-stage1 + overlap) and saving a synthetic training "
      "graph through the IR against bare protobuf; prints markdown tables.",
      "graph-io-bench");
  zerograph::BenchOptions options;
  const std::map<std::string, zerograph::GraphKind> kinds = {
      {"mlp", zerograph::GraphKind::kMlp},
      {"foreign", zerograph::GraphKind::kForeign},
      {"foreign-roles", zerograph::GraphKind::kForeignWithRoles}};
  app.add_option("--graph", options.graph,
                 "mlp: ours (roles, one AdamW per parameter); foreign: standard ops, no roles, no "
                 "value_info, one AdamW over every parameter, post-processing chains of 0-3 "
                 "nodes; foreign-roles: the same with roles")
      ->transform(CLI::CheckedTransformer(kinds))
      ->capture_default_str();
  CLI::Option* bare_round_trip =
      app.add_option("--bare-round-trip", options.bare_round_trip,
                     "The bare-round-trip program, the baseline rewrite-graph is timed against")
          ->check(CLI::ExistingFile);
  app.add_option("--rewrite-graph", options.rewrite_graph,
                 "Also time this rewrite-graph program, copying and rewriting each graph, "
                 "against --bare-round-trip")
      ->check(CLI::ExistingFile)
      ->needs(bare_round_trip);
  app.add_option("--nodes", options.nodes, "Graph sizes to run, in nodes (about)")
      ->capture_default_str();
  app.add_option("--reps", options.reps, "Timed repetitions of each variant (median reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--budget-s", options.budget_s,
                 "Start no new repetition after this many seconds at one size (at least one runs)")
      ->capture_default_str();
  app.add_flag("--no-training-metadata", options.no_training_metadata,
               "Write the graph without zerograph.* metadata, to see what the training spec costs");
  app.add_flag("--no-passes", options.no_passes, "Time only load, verify and save");
  app.add_option("--nranks", options.nranks, "Ranks the rewrite shards across")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--align", options.align,
                 "The rewrite's padding rule (rewrite-graph --align): seed pads every parameter, "
                 "compact only shard and bucket ends")
      ->check(CLI::IsMember({"seed", "compact"}))
      ->capture_default_str();
  app.add_option("--comm-buffer-mb", options.comm_buffer_mb,
                 "Bucket limits to rewrite with, in MiB (each one is a row)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--dir", options.dir, "Folder for the graph files (default: the temp folder)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("!--no-settle-memory", options.settle_memory,
               "Do not touch and free memory before each timed run (SettleMemory): each run then "
               "pays for the part of its peak above its predecessor's");
  app.add_flag("--keep-files", options.keep_files,
               "Leave the graph files in --dir, to profile rewrite-graph on them");
  CLI11_PARSE(app, argc, argv);
  zerograph::Status status = zerograph::RunBench(options);
  if (!status.ok()) {
    std::cerr << "error: " << status.message() << "\n";
    return status.ExitCode();
  }
  return 0;
}
