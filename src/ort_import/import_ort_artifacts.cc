#include "zerograph/ort_import/import_ort_artifacts.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ort_import/ort_checkpoint.h"
#include "ort_import/ort_optimizer.h"
#include "zerograph/core/mapped_file.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/proto_store.h"
#include "zerograph/ir/tensor_type.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"
#include "zerograph/ir/verify.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMicrosoftDomain = "com.microsoft";
constexpr std::string_view kAccumulator = "InPlaceAccumulatorV2";
constexpr std::string_view kBufferSuffix = "_grad.accumulation.buffer";

// One parameter's gradient accumulation in ONNX Runtime's training model:
//   InPlaceAccumulatorV2(<param>_grad.accumulation.buffer, gradient, reset) -> flag
// where the buffer and `reset` are graph inputs and the flag a graph output nothing else reads.
struct Accumulation {
  std::string param;
  std::string gradient;
};

// What the training model's graph holds, sorted out: the accumulations (in node order), and what
// the conversion drops.
struct TrainingModelParts {
  std::vector<Accumulation> accumulations;
  std::set<std::string, std::less<>> dropped_inputs;   // buffers and the reset flag
  std::set<std::string, std::less<>> dropped_outputs;  // the accumulators' flags
  std::set<int> dropped_nodes;                         // the accumulators
};

// Finds every accumulation; any other accumulator op, or one wired otherwise, is an error naming
// the node (the conversion would drop what it cannot account for).
StatusOr<TrainingModelParts> FindAccumulations(const onnx::GraphProto& graph) {
  std::set<std::string_view> inputs, outputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  for (const onnx::ValueInfoProto& output : graph.output()) outputs.insert(output.name());
  std::map<std::string_view, int> readers;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) ++readers[input];
  }

  TrainingModelParts parts;
  std::optional<std::string_view> reset;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    // ORT's accumulators: InPlaceAccumulator, InPlaceAccumulatorV2, ZeroGradient.
    const bool accumulates =
        node.op_type().find("Accumulator") != std::string::npos || node.op_type() == "ZeroGradient";
    if (!accumulates) continue;
    const std::string where = StrCat("node '", node.name(), "' (", node.op_type(), ")");
    ZG_RETURN_IF_NOT(node.domain() == kMicrosoftDomain && node.op_type() == kAccumulator, where,
                     ": unknown gradient accumulation; zerograph maps ", kMicrosoftDomain, " ",
                     kAccumulator, " only");
    ZG_RETURN_IF_NOT(node.input_size() == 3 && node.output_size() == 1, where,
                     ": unknown accumulation pattern: expected (buffer, gradient, reset) -> flag");
    const std::string& buffer = node.input(0);
    const std::string& flag = node.output(0);
    ZG_RETURN_IF_NOT(
        buffer.ends_with(kBufferSuffix) && inputs.contains(buffer) && readers[buffer] == 1, where,
        ": unknown accumulation pattern: its buffer '", buffer,
        "' is not a graph input '<parameter>", kBufferSuffix, "' read only by it");
    ZG_RETURN_IF_NOT(inputs.contains(node.input(2)) && (!reset || *reset == node.input(2)), where,
                     ": unknown accumulation pattern: its reset flag '", node.input(2),
                     "' is not the graph input every accumulator reads");
    ZG_RETURN_IF_NOT(outputs.contains(flag) && readers[flag] == 0, where,
                     ": unknown accumulation pattern: its output '", flag,
                     "' is not a graph output nothing else reads");
    reset = node.input(2);
    std::string param = buffer.substr(0, buffer.size() - kBufferSuffix.size());
    ZG_RETURN_IF_NOT(inputs.contains(param), where, ": accumulates the gradient of '", param,
                     "', which is no graph input");
    parts.accumulations.push_back({std::move(param), node.input(1)});
    parts.dropped_inputs.insert(buffer);
    parts.dropped_outputs.insert(flag);
    parts.dropped_nodes.insert(i);
  }
  ZG_RETURN_IF_NOT(!parts.accumulations.empty(), "no gradient accumulation (", kAccumulator,
                   "): not an ONNX Runtime training model, or one zerograph cannot map");
  ZG_RETURN_IF_NOT(readers[*reset] == static_cast<int>(parts.accumulations.size()), "'", *reset,
                   "', the accumulators' reset flag, is read by other nodes too: "
                   "unknown accumulation pattern");
  parts.dropped_inputs.insert(std::string(*reset));
  return parts;
}

// The static type of a graph input, or nullopt when it is not a tensor.
std::optional<TensorType> InputType(const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type()) return std::nullopt;
  const onnx::TypeProto::Tensor& tensor = input.type().tensor_type();
  TensorType type;
  type.dtype = DataTypeFromOnnx(tensor.elem_type()).value_or(DataType::kUndefined);
  if (tensor.has_shape()) {
    type.dims.emplace();
    for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
      type.dims->push_back(dim.has_dim_value() ? dim.dim_value() : TensorType::kUnknownDim);
    }
  }
  return type;
}

// The checkpoint's tensor for each parameter input, checked against the training model: the
// same names (each trainable one with a gradient) and the same types.
struct ParameterInputs {
  std::vector<const OrtTensor*> trainable;  // in graph-input order, the optimizer's order
  std::vector<const OrtTensor*> frozen;
};

StatusOr<ParameterInputs> MatchCheckpoint(const onnx::GraphProto& graph,
                                          const TrainingModelParts& parts,
                                          const OrtCheckpoint& checkpoint) {
  std::map<std::string_view, const OrtTensor*> trainable, frozen;
  for (const OrtTensor& tensor : checkpoint.trainable) trainable[tensor.name] = &tensor;
  for (const OrtTensor& tensor : checkpoint.frozen) frozen[tensor.name] = &tensor;
  std::set<std::string_view> accumulated;
  for (const Accumulation& accumulation : parts.accumulations) {
    accumulated.insert(accumulation.param);
  }
  ParameterInputs params;
  std::set<std::string_view> matched;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    const std::string& name = input.name();
    const bool is_trainable = accumulated.contains(name);
    auto in_trainable = trainable.find(name);
    auto in_frozen = frozen.find(name);
    const OrtTensor* tensor = nullptr;
    if (is_trainable) {
      ZG_RETURN_IF_NOT(in_trainable != trainable.end(), "parameter '", name,
                       "' (trained in the training model) is missing from the checkpoint's ",
                       in_frozen != frozen.end() ? "trainable parameters (it is frozen there)"
                                                 : "parameters: a checkpoint of another model?");
      tensor = in_trainable->second;
      params.trainable.push_back(tensor);
    } else if (in_trainable != trainable.end()) {
      return InvalidArgumentError(StrCat("the checkpoint trains '", name,
                                         "', whose gradient the training model does not compute"));
    } else if (in_frozen != frozen.end()) {
      tensor = in_frozen->second;
      params.frozen.push_back(tensor);
    } else {
      continue;  // a data input or what the conversion drops
    }
    matched.insert(name);
    const std::optional<TensorType> type = InputType(input);
    const TensorType stored{tensor->dtype, tensor->dims};
    ZG_RETURN_IF_NOT(type == stored, "parameter '", name, "' is ",
                     type ? type->ToString() : std::string("not a tensor"),
                     " in the training model but ", stored.ToString(),
                     " in the checkpoint: a checkpoint of another model?");
  }
  for (const auto* tensors : {&checkpoint.trainable, &checkpoint.frozen}) {
    for (const OrtTensor& tensor : *tensors) {
      ZG_RETURN_IF_NOT(matched.contains(tensor.name), "the checkpoint holds parameter '",
                       tensor.name,
                       "', which the training model does not read: a checkpoint of another model?");
    }
  }
  return params;
}

// Removes the entries of `field` (inputs, outputs, value_info, nodes) that `drop` names.
template <typename Repeated, typename Drop>
void EraseIf(Repeated& field, Drop drop) {
  int kept = 0;
  for (int i = 0; i < field.size(); ++i) {
    if (drop(i, field.Get(i))) continue;
    if (kept != i) field.SwapElements(kept, i);
    ++kept;
  }
  while (field.size() > kept) field.RemoveLast();
}

// The training model with the parameters as initializers and the accumulation gone, in the IR.
StatusOr<std::unique_ptr<Graph>> BuildForwardBackward(std::unique_ptr<ProtoStore> store,
                                                      const TrainingModelParts& parts,
                                                      const ParameterInputs& params) {
  onnx::GraphProto& graph = *store->model->mutable_graph();
  std::set<std::string_view> now_initializers;
  for (const auto* list : {&params.trainable, &params.frozen}) {
    for (const OrtTensor* tensor : *list) {
      onnx::TensorProto* init = graph.add_initializer();
      init->set_name(tensor->name);
      init->set_data_type(static_cast<int32_t>(tensor->dtype));  // DataType is ONNX's numbering
      for (int64_t dim : tensor->dims) init->add_dims(dim);
      init->set_raw_data(tensor->bytes.data(), tensor->bytes.size());
      now_initializers.insert(tensor->name);
    }
  }
  auto dropped = [&](const std::string& name) {
    return parts.dropped_inputs.contains(name) || parts.dropped_outputs.contains(name);
  };
  EraseIf(*graph.mutable_input(), [&](int, const onnx::ValueInfoProto& input) {
    return dropped(input.name()) || now_initializers.contains(input.name());
  });
  EraseIf(*graph.mutable_output(),
          [&](int, const onnx::ValueInfoProto& output) { return dropped(output.name()); });
  EraseIf(*graph.mutable_value_info(),
          [&](int, const onnx::ValueInfoProto& info) { return dropped(info.name()); });
  EraseIf(*graph.mutable_node(),
          [&](int i, const onnx::NodeProto&) { return parts.dropped_nodes.contains(i); });
  return Graph::FromModelProto(std::move(store), [](const onnx::TensorProto& tensor) {
    return StatusOr<Graph::ExternalBytes>(InvalidArgumentError(
        StrCat("initializer '", tensor.name(), "' keeps its data in an external file, which an ",
               "ONNX Runtime training model does not")));
  });
}

// Marks the loss and its ancestors forward and moves them ahead of the rest (ONNX Runtime may put
// the loss after the backward nodes that do not need it); everything else is backward.
void AssignRoles(Graph& graph, Node* loss) {
  std::vector<bool> forward(graph.node_id_bound(), false);
  std::vector<Node*> stack = {loss};
  forward[loss->id()] = true;
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (Value* input : node->inputs()) {
      Node* producer = input != nullptr ? input->producer() : nullptr;
      if (producer == nullptr || forward[producer->id()]) continue;
      forward[producer->id()] = true;
      stack.push_back(producer);
    }
  }
  // A forward node reads only forward nodes, so moving each ahead of the first backward node, in
  // schedule order, keeps the order topological.
  Node* first_backward = nullptr;
  for (Node* node = graph.first_node(); node != nullptr;) {
    Node* next = node->next();
    if (!forward[node->id()]) {
      node->SetRole(OpRole::kBackward);
      if (first_backward == nullptr) first_backward = node;
    } else {
      node->SetRole(OpRole::kForward, /*is_loss=*/node == loss);
      if (first_backward != nullptr) graph.MoveBefore(node, first_backward);
    }
    node = next;
  }
}

// `base` when no value has that name yet, else a fresh variant of it.
std::string FreeName(const Graph& graph, std::string_view base) {
  return graph.FindValue(base) == nullptr ? std::string(base) : graph.UniqueValueName(base);
}

// The optimizer state `state_name` ("momentum0") of `param` from the checkpoint, or nullptr when it
// has none.
StatusOr<const OrtTensor*> CheckpointState(const OrtCheckpoint& checkpoint, const OrtTensor& param,
                                           const std::string& state_name) {
  if (checkpoint.optimizer_groups.empty()) return nullptr;
  const OrtOptimizerGroup& group = checkpoint.optimizer_groups.front();
  auto states = group.states.find(param.name);
  if (states == group.states.end()) {
    ZG_RETURN_IF_NOT(group.step == 0, "the checkpoint's optimizer is at step ", group.step,
                     " but holds no states of '", param.name, "'");
    return nullptr;
  }
  auto state = states->second.find(state_name);
  ZG_RETURN_IF_NOT(state != states->second.end(), "the checkpoint's optimizer states of '",
                   param.name, "' lack '", state_name, "'");
  const OrtTensor& tensor = state->second;
  ZG_RETURN_IF_NOT(tensor.dtype == param.dtype && tensor.dims == param.dims,
                   "the checkpoint's optimizer state '", state_name, "' of '", param.name, "' is ",
                   TensorType{tensor.dtype, tensor.dims}.ToString(), ", its parameter ",
                   TensorType{param.dtype, param.dims}.ToString());
  return &tensor;
}

// Appends the optimizer: one multi-tensor update over every trainable parameter, its new values
// graph outputs bound to what they replace.
Status AddOptimizer(Graph& graph, const OrtOptimizer& optimizer, const OrtCheckpoint& checkpoint,
                    const ParameterInputs& params, const std::vector<Value*>& gradients,
                    TrainingSpec& spec) {
  const bool adamw = optimizer.kind == OrtOptimizer::Kind::kAdamW;
  Value* lr =
      graph.AddInput(FreeName(graph, "lr"), TensorType{DataType::kFloat32, std::vector<int64_t>{}});
  spec.lr_input = std::string(lr->name());
  std::vector<Value*> inputs = {lr};
  if (adamw) {
    const TensorType scalar{DataType::kInt64, std::vector<int64_t>{}};
    Value* step = graph.AddInput(FreeName(graph, "step"), scalar);
    spec.step_input = std::string(step->name());
    // The step input counts this run's updates from 1; ONNX Runtime's bias correction continues
    // from the updates the checkpoint's optimizer has done.
    const int64_t done =
        checkpoint.optimizer_groups.empty() ? 0 : checkpoint.optimizer_groups.front().step;
    ZG_RETURN_IF_NOT(done >= 0, "the checkpoint's optimizer step is negative (", done, ")");
    if (done > 0) {
      Value* offset = graph.AddInitializer(FreeName(graph, "step.done"), DataType::kInt64, {},
                                           std::as_bytes(std::span(&done, 1)));
      Node* add = graph.AddNode("Add", "", {step, offset}, {FreeName(graph, "step.total")},
                                graph.UniqueNodeName("step.total/Add"));
      add->SetRole(OpRole::kOptimize);
      graph.SetValueType(add->output(0), scalar);
      step = add->output(0);
    }
    inputs.push_back(step);
  }
  std::vector<Value*> updated;  // what each output replaces
  std::vector<TensorType> types;
  for (const OrtTensor* param : params.trainable) {
    Value* value = graph.FindValue(param->name);
    inputs.push_back(value);
    updated.push_back(value);
    types.push_back({param->dtype, param->dims});
  }
  inputs.insert(inputs.end(), gradients.begin(), gradients.end());
  if (adamw) {
    for (auto [suffix, ort_name] : {std::pair{".m1", "momentum0"}, {".m2", "momentum1"}}) {
      for (const OrtTensor* param : params.trainable) {
        ZG_ASSIGN_OR_RETURN(const OrtTensor* stored, CheckpointState(checkpoint, *param, ort_name));
        const std::string name = FreeName(graph, StrCat(param->name, suffix));
        Value* state = stored != nullptr
                           ? graph.AddInitializer(name, param->dtype, param->dims, stored->bytes)
                           : graph.AddInitializer(name, param->dtype, param->dims,
                                                  std::string(param->bytes.size(), '\0'));
        inputs.push_back(state);
        updated.push_back(state);
        types.push_back({param->dtype, param->dims});
      }
    }
  }
  std::vector<std::string> outputs;
  for (const Value* value : updated)
    outputs.push_back(FreeName(graph, StrCat(value->name(), ".new")));
  Node* update = graph.AddNode(adamw ? "AdamW" : "SGD", kZerographDomain, inputs, outputs,
                               graph.UniqueNodeName(adamw ? "AdamW" : "SGD"));
  graph.SetOpsetVersion(kZerographDomain, 1);
  update->SetRole(OpRole::kOptimize);
  if (adamw) {
    update->SetFloat("beta1", optimizer.beta1);
    update->SetFloat("beta2", optimizer.beta2);
    update->SetFloat("epsilon", optimizer.epsilon);
    update->SetFloat("weight_decay", optimizer.weight_decay);
    update->SetInt("adam_mode", optimizer.adam_mode);
    update->SetInt("correct_bias", optimizer.correct_bias);
  }
  for (size_t k = 0; k < updated.size(); ++k) {
    Value* new_value = update->output(k);
    graph.SetValueType(new_value, types[k]);
    graph.AddOutput(new_value);
    spec.state_binding.emplace_back(new_value->name(), updated[k]->name());
  }
  return Status::Ok();
}

// The import once the three files are read; errors say what is wrong, the caller which files.
StatusOr<std::unique_ptr<Graph>> Convert(std::unique_ptr<ProtoStore> store,
                                         const OrtOptimizer& optimizer,
                                         const OrtCheckpoint& checkpoint) {
  ZG_ASSIGN_OR_RETURN(TrainingModelParts parts, FindAccumulations(store->model->graph()));
  ZG_ASSIGN_OR_RETURN(ParameterInputs params,
                      MatchCheckpoint(store->model->graph(), parts, checkpoint));
  ZG_RETURN_IF_NOT(checkpoint.optimizer_groups.size() <= 1, "the checkpoint has ",
                   checkpoint.optimizer_groups.size(),
                   " optimizer groups; zerograph maps one optimizer over every parameter");
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                      BuildForwardBackward(std::move(store), parts, params));

  TrainingSpec spec;
  ZG_RETURN_IF_NOT(graph->outputs().size() == 1,
                   "expected one graph output besides the accumulators' (the loss), found ",
                   graph->outputs().size());
  Value* loss = graph->outputs().front();
  ZG_RETURN_IF_NOT(loss->producer() != nullptr, "the loss '", loss->name(),
                   "' is computed by no node");
  spec.loss = std::string(loss->name());
  for (const Value* input : graph->inputs()) spec.data_inputs.emplace_back(input->name());
  AssignRoles(*graph, loss->producer());

  std::vector<Value*> gradients;
  std::map<std::string_view, std::string_view> gradient_of;
  for (const Accumulation& accumulation : parts.accumulations) {
    gradient_of[accumulation.param] = accumulation.gradient;
  }
  for (const OrtTensor* param : params.trainable) {
    Value* gradient = graph->FindValue(gradient_of[param->name]);
    ZG_RET_CHECK(gradient != nullptr);
    gradients.push_back(gradient);
  }
  ZG_RETURN_IF_ERROR(AddOptimizer(*graph, optimizer, checkpoint, params, gradients, spec));
  WriteTrainingSpec(spec, *graph);
  ZG_RETURN_IF_ERROR(Verify(*graph));
  return graph;
}

StatusOr<std::unique_ptr<ProtoStore>> ParseTrainingModel(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                      MappedFile::Open(path, MappedFile::Pages::kUpFront));
  auto store = std::make_unique<ProtoStore>();
  const std::span<const std::byte> bytes = file->bytes();
  if (!store->model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return DataLossError(StrCat("'", path, "': not an ONNX model (the protobuf does not parse)"));
  }
  return store;
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> ImportOrtArtifacts(const std::string& dir) {
  const std::string training = (fs::path(dir) / "training_model.onnx").string();
  const std::string optimizer_path = (fs::path(dir) / "optimizer_model.onnx").string();
  const std::string checkpoint_path = (fs::path(dir) / "checkpoint").string();
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<ProtoStore> store, ParseTrainingModel(training));
  ZG_ASSIGN_OR_RETURN(OrtOptimizer optimizer, ReadOrtOptimizer(optimizer_path));
  ZG_ASSIGN_OR_RETURN(OrtCheckpoint checkpoint, ReadOrtCheckpoint(checkpoint_path));
  StatusOr<std::unique_ptr<Graph>> graph = Convert(std::move(store), optimizer, checkpoint);
  if (!graph.ok()) {
    return std::move(graph).status().WithContext(
        StrCat("importing '", training, "' with '", checkpoint_path, "'"));
  }
  return graph;
}

}  // namespace zerograph
