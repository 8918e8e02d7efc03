#include "zerograph/models/mlp.h"

#include <cmath>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/verify.h"

#include "uniform_random.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

// A trainable tensor and what the optimizer needs about it.
struct Param {
  Value* value;
  Value* grad = nullptr;
  std::vector<int64_t> dims;
};

Status CheckConfig(const MlpConfig& config) {
  ZG_RETURN_IF_NOT(!config.name.empty(), "MLP graph needs a name");
  ZG_RETURN_IF_NOT(config.batch >= 1, "MLP batch must be at least 1, got ", config.batch);
  ZG_RETURN_IF_NOT(config.widths.size() >= 2, "MLP needs an input and an output width");
  for (int64_t width : config.widths) {
    ZG_RETURN_IF_NOT(width >= 1, "MLP widths must be positive, got ", width);
  }
  return Status::Ok();
}

// What the forward pass made: the parameters, and per layer its input and pre-activation.
struct MlpForward {
  std::vector<Param> weights, biases;
  std::vector<Value*> layer_inputs, pre_activations;
  Value* prediction = nullptr;
};

// The parameters (initializers, deterministic from config.seed) and the forward nodes on `x`, in
// the role `b` has: one builder for the training graph and the forward graph alone, so that both
// have the same weights and ops.
MlpForward AddMlpForward(GraphBuilder& b, const MlpConfig& config, Value* x,
                         std::optional<OpRole> role) {
  const int64_t batch = config.batch;
  const size_t layers = config.widths.size() - 1;
  MlpForward f;
  std::mt19937 rng(config.seed);
  for (size_t i = 0; i < layers; ++i) {
    const int64_t fan_in = config.widths[i], fan_out = config.widths[i + 1];
    // Xavier-uniform, Paddle's default for Linear weights; biases start at zero.
    const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
    std::vector<float> init = UniformVector(rng, fan_in * fan_out, -limit, limit);
    f.weights.push_back(
        {b.Initializer(StrCat("w", i), {fan_in, fan_out}, init), nullptr, {fan_in, fan_out}});
    if (config.bias)
      f.biases.push_back({b.Zeros(StrCat("b", i), kF32, {fan_out}), nullptr, {fan_out}});
  }

  // Layer i reads layer_inputs[i] and computes pre_activations[i].
  b.SetRole(role);
  Value* h = x;
  if (config.relu_input) {
    h = b.SetType(b.Op("Relu", {x}, "h0"), kF32, {batch, config.widths.front()});
  }
  for (size_t i = 0; i < layers; ++i) {
    const int64_t width = config.widths[i + 1];
    f.layer_inputs.push_back(h);
    Value* z = config.bias
                   ? b.Op("Gemm", {h, f.weights[i].value, f.biases[i].value}, StrCat("z", i))
                   : b.Op("MatMul", {h, f.weights[i].value}, StrCat("z", i));
    f.pre_activations.push_back(b.SetType(z, kF32, {batch, width}));
    h = z;
    if (i + 1 < layers || config.relu_output) {
      h = b.SetType(b.Op("Relu", {z}, StrCat("h", i + 1)), kF32, {batch, width});
    }
  }
  f.prediction = h;
  return f;
}

}  // namespace

MlpConfig MlpDemoConfig() { return MlpConfig(); }

MlpConfig MlpWideConfig() {
  MlpConfig config;
  config.name = "mlp_wide";
  config.batch = 32;
  config.widths = std::vector<int64_t>(9, 1024);
  config.bias = true;
  config.relu_input = false;
  config.relu_output = false;
  return config;
}

StatusOr<std::unique_ptr<Graph>> BuildMlpForwardGraph(const MlpConfig& config) {
  ZG_RETURN_IF_ERROR(CheckConfig(config));
  auto graph = std::make_unique<Graph>();
  graph->SetName(config.name);
  GraphBuilder b(*graph);
  Value* x = b.Input("x", kF32, {config.batch, config.widths.front()});
  b.Output(AddMlpForward(b, config, x, std::nullopt).prediction);
  ZG_RETURN_IF_ERROR(Verify(*graph).WithContext("generated MLP forward graph"));
  return graph;
}

StatusOr<std::unique_ptr<Graph>> BuildMlpTrainingGraph(const MlpConfig& config) {
  ZG_RETURN_IF_ERROR(CheckConfig(config));
  auto graph = std::make_unique<Graph>();
  graph->SetName(config.name);
  GraphBuilder b(*graph);
  const int64_t batch = config.batch;
  const size_t layers = config.widths.size() - 1;
  const int64_t out_width = config.widths.back();
  const bool adamw = config.optimizer == MlpOptimizer::kAdamW;

  Value* x = b.Input("x", kF32, {batch, config.widths.front()});
  Value* y = b.Input("y", kF32, {batch, out_width});
  Value* lr = b.Input("lr", kF32, {});
  Value* step = adamw ? b.Input("step", DataType::kInt64, {}) : nullptr;

  MlpForward forward = AddMlpForward(b, config, x, OpRole::kForward);
  std::vector<Param>& weights = forward.weights;
  std::vector<Param>& biases = forward.biases;
  const std::vector<Value*>& layer_inputs = forward.layer_inputs;
  const std::vector<Value*>& pre_activations = forward.pre_activations;
  Value* h = forward.prediction;
  Value* diff = b.SetType(b.Op("Sub", {h, y}, "diff"), kF32, {batch, out_width});
  Value* squared = b.SetType(b.Op("Mul", {diff, diff}, "sq"), kF32, {batch, out_width});
  b.SetRole(OpRole::kForward, /*is_loss=*/true);
  Value* loss = b.SetType(b.Op("ReduceMean", {squared}, "loss", {Attr("keepdims", 0)}), kF32, {});

  // Backward: d mean((p - y)^2) / dp = 2 (p - y) / numel, then layer by layer from the top.
  b.SetRole(OpRole::kBackward);
  const float grad_scale = 2.0f / static_cast<float>(batch * out_width);
  Value* scale = b.SetType(
      b.Op("Constant", {}, "loss.grad_scale", {Attr("value_float", grad_scale)}), kF32, {});
  Value* grad = b.SetType(b.Op("Mul", {diff, scale}, "pred.grad"), kF32, {batch, out_width});
  if (config.relu_output) {
    grad = b.SetType(b.Op({kZerographDomain, "ReluGrad"}, {grad, pre_activations.back()},
                          StrCat("z", layers - 1, ".grad")),
                     kF32, {batch, out_width});
  }
  Value* reduce_axes = nullptr;
  for (size_t i = layers; i-- > 0;) {
    const int64_t fan_in = config.widths[i], fan_out = config.widths[i + 1];
    // dW = h^T dz, db = sum over rows of dz, dh = dz W^T.
    weights[i].grad = b.SetType(
        b.Op("Gemm", {layer_inputs[i], grad}, StrCat("w", i, ".grad"), {Attr("transA", 1)}), kF32,
        {fan_in, fan_out});
    if (config.bias) {
      if (reduce_axes == nullptr) {
        reduce_axes = b.SetType(
            b.Op("Constant", {}, "reduce_axes", {Attr("value_ints", std::vector<int64_t>{0})}),
            DataType::kInt64, {1});
      }
      biases[i].grad = b.SetType(
          b.Op("ReduceSum", {grad, reduce_axes}, StrCat("b", i, ".grad"), {Attr("keepdims", 0)}),
          kF32, {fan_out});
    }
    if (i == 0) break;
    Value* input_grad = b.SetType(
        b.Op("Gemm", {grad, weights[i].value}, StrCat("h", i, ".grad"), {Attr("transB", 1)}), kF32,
        {batch, fan_in});
    grad = b.SetType(b.Op({kZerographDomain, "ReluGrad"}, {input_grad, pre_activations[i - 1]},
                          StrCat("z", i - 1, ".grad")),
                     kF32, {batch, fan_in});
  }

  // Optimizer: one multi-tensor update over every parameter, in forward order.
  std::vector<Param> params;
  for (size_t i = 0; i < layers; ++i) {
    params.push_back(weights[i]);
    if (config.bias) params.push_back(biases[i]);
  }
  std::vector<const char*> state_suffixes;
  if (adamw) state_suffixes = {".m1", ".m2"};
  std::vector<Value*> inputs = {lr};
  if (adamw) inputs.push_back(step);
  std::vector<std::string> outputs;
  std::vector<std::pair<Value*, std::vector<int64_t>>> updated;  // old value, dims per output
  for (const Param& param : params) {
    inputs.push_back(param.value);
    outputs.push_back(StrCat(param.value->name(), ".new"));
    updated.emplace_back(param.value, param.dims);
  }
  for (const Param& param : params) inputs.push_back(param.grad);
  for (const char* suffix : state_suffixes) {
    for (const Param& param : params) {
      Value* state = b.Zeros(StrCat(param.value->name(), suffix), kF32, param.dims);
      inputs.push_back(state);
      outputs.push_back(StrCat(state->name(), ".new"));
      updated.emplace_back(state, param.dims);
    }
  }
  b.SetRole(OpRole::kOptimize);
  Node* update;
  if (adamw) {
    update = b.AddNode({kZerographDomain, "AdamW"}, inputs, outputs,
                       {Attr("beta1", 0.9f), Attr("beta2", 0.999f), Attr("epsilon", 1e-8f),
                        Attr("weight_decay", 0.01f)});
  } else {
    update = b.AddNode({kZerographDomain, "SGD"}, inputs, outputs);
  }

  TrainingSpec spec;
  spec.loss = std::string(loss->name());
  spec.data_inputs = {std::string(x->name()), std::string(y->name())};
  spec.lr_input = std::string(lr->name());
  if (step != nullptr) spec.step_input = std::string(step->name());
  b.Output(loss);
  for (size_t k = 0; k < update->num_outputs(); ++k) {
    Value* new_value = update->output(k);
    b.SetType(new_value, kF32, updated[k].second);
    b.Output(new_value);
    spec.state_binding.emplace_back(new_value->name(), updated[k].first->name());
  }
  WriteTrainingSpec(spec, *graph);

  // The generated graph must read back as a valid training graph.
  ZG_RETURN_IF_ERROR(Verify(*graph).WithContext("generated MLP graph"));
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> read_back, ReadTrainingSpec(*graph));
  ZG_RET_CHECK(read_back.has_value());
  return graph;
}

MlpDataset MakeMlpDataset(const MlpConfig& config, int64_t samples) {
  std::mt19937 rng(config.seed + 1);
  MlpDataset data;
  data.samples = samples;
  data.x = UniformVector(rng, samples * config.widths.front(), -1.0f, 1.0f);
  data.y = UniformVector(rng, samples * config.widths.back(), 0.0f, 1.0f);
  return data;
}

Status WriteMlpDataset(const MlpConfig& config, int64_t samples, const std::string& path) {
  ZG_RETURN_IF_ERROR(CheckConfig(config));
  ZG_RETURN_IF_NOT(samples >= 1, "dataset needs at least 1 sample, got ", samples);
  MlpDataset data = MakeMlpDataset(config, samples);
  const SafetensorsWriteEntry tensors[] = {
      {"x", kF32, {samples, config.widths.front()}, std::as_bytes(std::span(data.x))},
      {"y", kF32, {samples, config.widths.back()}, std::as_bytes(std::span(data.y))},
  };
  const std::pair<std::string, std::string> metadata[] = {
      {"generator", "zerograph generate-models"},
      {"seed", StrCat(config.seed + 1)},
  };
  return WriteSafetensors(path, tensors, metadata);
}

}  // namespace zerograph
