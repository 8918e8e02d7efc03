#include "zerograph/passes/autodiff_pass.h"

#include <cmath>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "passes/autodiff/loss_builder.h"
#include "passes/autodiff/optimizer_builder.h"
#include "passes/autodiff/sweep.h"
#include "passes/autodiff/value_shapes.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

std::string GraphLabel(const Graph& graph) {
  return graph.name().empty() ? std::string("the graph") : StrCat("graph '", graph.name(), "'");
}

std::string OutputNames(const Graph& graph) {
  std::string names;
  for (const Value* output : graph.outputs()) {
    names += StrCat(names.empty() ? "" : ", ", output->name());
  }
  return names.empty() ? "none" : names;
}

// The forward output the loss is computed on.
StatusOr<Value*> FindLossOn(const Graph& graph, const std::string& name) {
  if (name.empty()) {
    ZG_RETURN_IF_NOT(graph.outputs().size() == 1, GraphLabel(graph), " has ",
                     graph.outputs().size(), " outputs (", OutputNames(graph),
                     "): name the one the loss is on with --loss-on");
    return graph.outputs()[0];
  }
  for (Value* output : graph.outputs()) {
    if (output->name() == name) return output;
  }
  return InvalidArgumentError(StrCat("--loss-on '", name, "': ", GraphLabel(graph),
                                     " has no output '", name,
                                     "' (its outputs: ", OutputNames(graph), ")"));
}

// The floating initializers that may train: all but the frozen ones, each of which must be one.
StatusOr<std::vector<Value*>> Trainable(const Graph& graph, const std::vector<std::string>& frozen,
                                        int64_t& constant) {
  std::vector<Value*> floating;
  for (Value* init : graph.initializers()) {
    if (autodiff::IsFloating(init->initializer()->dtype())) floating.push_back(init);
  }
  ZG_RETURN_IF_NOT(!floating.empty(), GraphLabel(graph),
                   " has no floating initializer to train (are the weights graph inputs? export "
                   "them into the model as initializers)");
  std::set<std::string_view> names;
  for (const Value* init : floating) names.insert(init->name());
  for (const std::string& name : frozen) {
    ZG_RETURN_IF_NOT(names.contains(name), "--frozen '", name, "': ", GraphLabel(graph),
                     " has no floating initializer of that name");
  }
  const std::set<std::string_view> skip(frozen.begin(), frozen.end());
  std::vector<Value*> trainable;
  for (Value* init : floating) {
    if (!skip.contains(init->name())) trainable.push_back(init);
  }
  constant = static_cast<int64_t>(floating.size() - trainable.size());
  ZG_RETURN_IF_NOT(!trainable.empty(), GraphLabel(graph),
                   " has no floating initializer to train: every one is --frozen");
  return trainable;
}

// The label's dims under each probe set: an unknown one is the prediction's at the same axis
// (past the class axis for cross-entropy), so that symbolic dims agree in the loss's shapes.
void BindLabel(const Value& prediction, const Value& label, AutodiffPass::Loss loss,
               autodiff::ValueShapes& shapes) {
  const std::optional<TensorType> type = label.type();
  TensorSpec specs[2];
  for (int p = 0; p < 2; ++p) {
    const TensorSpec* predicted = shapes.probed(prediction, p);
    if (predicted == nullptr || !type || !type->dims) return;
    specs[p] = TensorSpec{type->dtype, *type->dims};
    for (size_t i = 0; i < specs[p].shape.size(); ++i) {
      const size_t axis = loss == AutodiffPass::Loss::kCrossEntropy && i >= 1 ? i + 1 : i;
      if (specs[p].shape[i] >= 0) continue;
      if (axis >= predicted->shape.size()) return;
      specs[p].shape[i] = predicted->shape[axis];
    }
  }
  shapes.BindInput(label, std::move(specs[0]), std::move(specs[1]));
}

// Erases the nodes nothing reads (what computed only the forward graph's dropped outputs), walking
// the schedule backwards so that a chain goes in one walk. Returns how many.
StatusOr<int64_t> EraseDeadNodes(Graph& graph) {
  int64_t erased = 0;
  for (Node* node = graph.last_node(); node != nullptr;) {
    Node* previous = node->prev();
    bool read = false;
    for (const Value* output : node->outputs()) {
      read = read || (output != nullptr && (!output->users().empty() || output->is_graph_output()));
    }
    if (!read) {
      ZG_RETURN_IF_ERROR(graph.EraseNode(node));
      ++erased;
    }
    node = previous;
  }
  return erased;
}

// The loss scale's state (`zg.loss_scale` = `initial`, `zg.loss_scale.good_steps` = 0, fp32
// scalars). Added before the shapes are inferred, so that the seed's shape is known.
StatusOr<TrainingSpec::LossScaling> AddLossScale(Graph& graph, float initial) {
  ZG_RETURN_IF_NOT(std::isfinite(initial) && initial > 0,
                   "the initial loss scale must be positive and finite, got ", initial);
  auto add_scalar = [&graph](std::string_view name, float value) {
    return graph.AddInitializer(name, DataType::kFloat32, {},
                                std::as_bytes(std::span<const float>(&value, 1)));
  };
  const Value* scale = add_scalar("zg.loss_scale", initial);
  const Value* good_steps = add_scalar("zg.loss_scale.good_steps", 0.0f);
  return TrainingSpec::LossScaling{std::string(scale->name()), std::string(good_steps->name())};
}

}  // namespace

std::optional<AutodiffPass::Loss> LossFromName(std::string_view name) {
  if (name == "mse") return AutodiffPass::Loss::kMeanSquaredError;
  if (name == "cross-entropy") return AutodiffPass::Loss::kCrossEntropy;
  if (name == "output") return AutodiffPass::Loss::kOutput;
  return std::nullopt;
}

std::optional<AutodiffPass::Optimizer> OptimizerFromName(std::string_view name) {
  if (name == "adamw") return AutodiffPass::Optimizer::kAdamW;
  if (name == "adam") return AutodiffPass::Optimizer::kAdam;
  if (name == "sgd") return AutodiffPass::Optimizer::kSgd;
  return std::nullopt;
}

StatusOr<bool> AutodiffPass::RunImpl(Graph& graph) {
  stats_ = Stats();
  ZG_RETURN_IF_NOT(!DeclaredLoss(graph), GraphLabel(graph),
                   " already is a training graph (it has zerograph.loss)");
  ZG_ASSIGN_OR_RETURN(Value * prediction, FindLossOn(graph, options_.loss_on));
  int64_t constant = 0;
  ZG_ASSIGN_OR_RETURN(std::vector<Value*> trainable, Trainable(graph, options_.frozen, constant));
  std::vector<std::string> data_inputs;
  for (const Value* input : graph.inputs()) {
    if (input->initializer() == nullptr) data_inputs.emplace_back(input->name());
  }

  for (Node* node : graph.nodes()) node->SetRole(OpRole::kForward);
  const int64_t forward_nodes = static_cast<int64_t>(graph.num_nodes());
  std::optional<TrainingSpec::LossScaling> loss_scaling;
  if (options_.loss_scale) {
    ZG_ASSIGN_OR_RETURN(loss_scaling, AddLossScale(graph, *options_.loss_scale));
  }
  ZG_ASSIGN_OR_RETURN(autodiff::ValueShapes shapes, autodiff::ValueShapes::Infer(graph));
  Node* const last_forward = graph.last_node();
  ZG_ASSIGN_OR_RETURN(autodiff::AppendedLoss loss,
                      autodiff::AppendLoss(graph, prediction, shapes.type(*prediction), options_));
  if (loss.label != nullptr) BindLabel(*prediction, *loss.label, options_.loss, shapes);
  for (Node* node = last_forward != nullptr ? last_forward->next() : graph.first_node();
       node != nullptr; node = node->next()) {
    Status inferred = shapes.InferNode(*node);
    if (!inferred.ok()) {
      return std::move(inferred).WithContext(
          loss.label == nullptr
              ? StrCat("the loss on '", prediction->name(), "'")
              : StrCat("the loss on '", prediction->name(), "' (",
                       shapes.type(*prediction).ToString(), ") against label '", loss.label->name(),
                       "' (", loss.label->type()->ToString(), ")"));
    }
  }
  const int64_t before_backward = static_cast<int64_t>(graph.num_nodes());
  Value* const outputs[] = {loss.loss};
  // With loss scaling the backward starts from the scale, not 1.
  Value* seeds[] = {nullptr};
  if (loss_scaling) {
    const TensorType& loss_type = shapes.type(*loss.loss);
    ZG_RETURN_IF_NOT(loss_type.dtype == DataType::kFloat32, "loss scaling needs an fp32 loss; '",
                     loss.loss->name(), "' is ", loss_type.ToString(),
                     " (with --amp, the graph's outputs keep their fp32 dtype)");
    seeds[0] = graph.FindValue(loss_scaling->scale);
  }
  ZG_ASSIGN_OR_RETURN(std::vector<Value*> grads,
                      autodiff::SweepBackward(graph, std::move(shapes), outputs, seeds, trainable));

  std::vector<autodiff::TrainedParameter> params;
  for (size_t i = 0; i < trainable.size(); ++i) {
    if (grads[i] == nullptr) {
      ++constant;
      continue;
    }
    params.push_back({trainable[i], grads[i]});
    stats_.trained_elements += trainable[i]->initializer()->numel();
  }
  ZG_RETURN_IF_NOT(!params.empty(), "no floating initializer of ", GraphLabel(graph),
                   " reaches the loss '", loss.loss->name(), "'");
  stats_.backward_nodes = static_cast<int64_t>(graph.num_nodes()) - before_backward;
  autodiff::AppendedOptimizer optimizer = autodiff::AppendOptimizer(graph, params, options_);

  // The training step's outputs: the loss and the updated state, nothing of the forward graph's.
  graph.EraseOutputsIf([](const Value*) { return true; });
  graph.AddOutput(loss.loss);
  TrainingSpec spec;
  spec.loss = std::string(loss.loss->name());
  spec.data_inputs = std::move(data_inputs);
  if (loss.label != nullptr) spec.data_inputs.emplace_back(loss.label->name());
  spec.lr_input = std::string(optimizer.lr->name());
  if (optimizer.step != nullptr) spec.step_input = std::string(optimizer.step->name());
  spec.loss_scaling = std::move(loss_scaling);
  for (const auto& [new_value, old_value] : optimizer.binding) {
    graph.AddOutput(new_value);
    spec.state_binding.emplace_back(new_value->name(), old_value->name());
  }
  WriteTrainingSpec(spec, graph);
  ZG_ASSIGN_OR_RETURN(stats_.dead_nodes, EraseDeadNodes(graph));

  stats_.forward_nodes = forward_nodes;
  stats_.trained = static_cast<int64_t>(params.size());
  stats_.constant = constant;
  return true;
}

std::string AutodiffPass::StatsString() const {
  return StrCat("forward nodes: ", stats_.forward_nodes,
                "\nbackward nodes: ", stats_.backward_nodes,
                "\ntrained parameters: ", stats_.trained, " (", stats_.trained_elements,
                " elements)\nconstant floating initializers: ", stats_.constant,
                "\nnodes nothing reads, erased: ", stats_.dead_nodes, "\n");
}

}  // namespace zerograph
