#include "zerograph/passes/gradient_control.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "passes/collective.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {
namespace {

constexpr std::string_view kPrefix = "zg.grad_control";

// The gradients every update reads, split by whether each rank holds a shard of them (bucket
// updates) or all of them (parameters updated whole), and the control the graph already has.
struct Updates {
  std::vector<Node*> nodes;  // in schedule order
  std::vector<Value*> shard_grads;
  std::vector<Value*> whole_grads;
  Node* control = nullptr;
};

StatusOr<Updates> FindUpdates(const Graph& graph) {
  Updates updates;
  for (Node* node : graph.nodes()) {
    if (!node->Is(kZerographDomain, "GradientControl")) continue;
    ZG_RETURN_IF_NOT(updates.control == nullptr, "the graph has two GradientControl nodes, '",
                     updates.control->name(), "' and '", node->name(), "'");
    updates.control = node;
  }
  for (Node* node : graph.nodes()) {
    const std::optional<OptimizerSignature> signature = FindOptimizerSignature(*node);
    if (!signature) continue;
    ZG_RETURN_IF_NOT(node->domain() == kZerographDomain, "optimizer node '", node->name(), "' (",
                     node->domain(), ".", node->op_type(),
                     ") takes no gradient control: clipping and loss scaling need org.zerograph's "
                     "AdamW or SGD");
    ZG_ASSIGN_OR_RETURN(std::vector<OptimizerSlot> slots, OptimizerSlots(*node, *signature));
    const Value* control = OptimizerControl(*node, *signature);
    ZG_RETURN_IF_NOT(
        control == nullptr || (updates.control != nullptr && control == updates.control->output(0)),
        "optimizer node '", node->name(), "' takes a control that no GradientControl node makes");
    std::vector<Value*>& grads = node->bucket() >= 0 ? updates.shard_grads : updates.whole_grads;
    for (const OptimizerSlot& slot : slots) grads.push_back(slot.grad);
    updates.nodes.push_back(node);
  }
  ZG_RETURN_IF_NOT(!updates.nodes.empty(), "the graph has no optimizer node to control");
  // The control is computed once, before the first update, from every gradient.
  const Node& first = *updates.nodes.front();
  for (const std::vector<Value*>* grads : {&updates.shard_grads, &updates.whole_grads}) {
    for (const Value* grad : *grads) {
      const Node* producer = grad->producer();
      ZG_RETURN_IF_NOT(producer == nullptr || producer->IsBefore(first), "gradient '", grad->name(),
                       "' is computed by '", producer->name(), "' after the first update '",
                       first.name(),
                       "': clipping and loss scaling need every gradient before any update");
    }
  }
  return updates;
}

TensorType Fp32(std::vector<int64_t> dims) { return TensorType{DataType::kFloat32, dims}; }

// Erases what an old control read, now that nothing reads it: its sums of squares, their
// all-reduce and their Add, made by an earlier run of the pass.
Status EraseUnread(Graph& graph, Value* value) {
  Node* node = value->producer();
  if (node == nullptr || !value->users().empty() || value->is_graph_output()) return Status::Ok();
  const bool sum = node->Is(kZerographDomain, "SumOfSquares");
  ZG_RET_CHECK(sum || node->Is(kZerographDomain, "AllReduce") || node->Is("", "Add"),
               "the old gradient control read '", value->name(), "' from '", node->name(),
               "', which the pass does not make");
  std::vector<Value*> inputs;
  if (!sum) inputs.assign(node->inputs().begin(), node->inputs().end());
  ZG_RETURN_IF_ERROR(graph.EraseNode(node));
  for (Value* input : inputs) ZG_RETURN_IF_ERROR(EraseUnread(graph, input));
  return Status::Ok();
}

}  // namespace

StatusOr<bool> GradientControlPass::RunImpl(Graph& graph) {
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> read, ReadTrainingSpec(graph));
  ZG_RETURN_IF_NOT(read.has_value(),
                   "the graph has no zerograph.loss metadata, so it is not a training graph");
  TrainingSpec spec = std::move(*read);
  ZG_RETURN_IF_NOT(std::isfinite(options_.max_norm) && options_.max_norm >= 0,
                   "the gradient clipping norm must be positive, got ", options_.max_norm);
  ZG_ASSIGN_OR_RETURN(Updates updates, FindUpdates(graph));
  if (options_.max_norm == 0 && !spec.loss_scaling && updates.control == nullptr) {
    stats_ = "  nothing to do: no clipping norm, no loss scaling\n";
    return false;
  }
  Node* const before = updates.nodes.front();
  auto add = [&](std::string_view op, std::span<Value* const> inputs, std::string output) {
    Node* node = graph.AddNode(op, op == "Add" ? "" : kZerographDomain, inputs,
                               std::vector<std::string>{output}, output, before);
    node->SetRole(OpRole::kOptimize);
    graph.SetValueType(node->output(0), Fp32({}));
    return node;
  };

  Value* total = nullptr;
  if (!updates.shard_grads.empty()) {
    total = add("SumOfSquares", updates.shard_grads, StrCat(kPrefix, ".shard_squares"))->output(0);
    if (spec.nranks.value_or(1) > 1) {
      Node* reduce = add("AllReduce", std::vector<Value*>{total}, StrCat(kPrefix, ".squares"));
      reduce->SetInt("nranks", *spec.nranks);
      reduce->SetString("group", "dp");
      reduce->SetString("reduce_op", "sum");
      // The same stream as the other collectives, so every rank runs them in one order.
      for (const Node* node : graph.nodes()) {
        if (node != reduce && IsCollective(*node)) {
          reduce->SetStream(node->stream());
          break;
        }
      }
      total = reduce->output(0);
    }
  }
  if (!updates.whole_grads.empty()) {
    Value* whole =
        add("SumOfSquares", updates.whole_grads, StrCat(kPrefix, ".whole_squares"))->output(0);
    total = total == nullptr
                ? whole
                : add("Add", std::vector<Value*>{total, whole}, StrCat(kPrefix, ".all_squares"))
                      ->output(0);
  }

  // A graph controlled before it was sharded (rewrite-graph --train --clip-grad-norm, then
  // --nranks in another call) keeps its control, which now reads the sharded layout's sums.
  Node* control = updates.control;
  if (control != nullptr) {
    Value* old_total = control->input(0);
    graph.SetInput(control, 0, total);
    graph.MoveBefore(control, before);
    ZG_RETURN_IF_ERROR(EraseUnread(graph, old_total));
    if (options_.max_norm > 0) control->SetFloat("max_norm", options_.max_norm);
  } else {
    std::vector<Value*> inputs = {total};
    std::vector<std::string> outputs = {std::string(kPrefix)};
    if (spec.loss_scaling) {
      for (const std::string* state : {&spec.loss_scaling->scale, &spec.loss_scaling->good_steps}) {
        inputs.push_back(graph.FindValue(*state));
        outputs.push_back(StrCat(*state, ".new"));
      }
    }
    control = graph.AddNode("GradientControl", kZerographDomain, inputs, outputs,
                            StrCat(kPrefix, ".control"), before);
    control->SetRole(OpRole::kOptimize);
    control->SetFloat("max_norm", options_.max_norm);
    if (spec.loss_scaling) {
      control->SetFloat("growth_factor", options_.growth_factor);
      control->SetFloat("backoff_factor", options_.backoff_factor);
      control->SetInt("growth_interval", options_.growth_interval);
    }
    graph.SetValueType(control->output(0), Fp32({3}));
    // An output, so that the trainer can report a skipped step and the norm.
    graph.AddOutput(control->output(0));
    if (spec.loss_scaling) {
      for (size_t i = 1; i < 3; ++i) {
        Value* new_state = control->output(i);
        graph.SetValueType(new_state, Fp32({}));
        graph.AddOutput(new_state);
        spec.state_binding.emplace_back(new_state->name(), inputs[i]->name());
      }
      WriteTrainingSpec(spec, graph);
    }
  }
  for (Node* update : updates.nodes) {
    if (OptimizerControl(*update, *FindOptimizerSignature(*update)) == nullptr) {
      graph.AppendInput(update, control->output(0));
    }
  }

  const std::optional<float> max_norm = control->GetFloat("max_norm");
  stats_ =
      StrCat("  updates controlled: ", updates.nodes.size(), " (", updates.shard_grads.size(),
             " sharded gradients, ", updates.whole_grads.size(), " whole)",
             updates.control != nullptr ? ", the graph's control rebuilt" : "", "\n  clipping: ",
             max_norm.value_or(0) > 0 ? StrCat("global norm ", *max_norm) : std::string("none"),
             "\n  loss scaling: ", control->num_inputs() > 1 ? "dynamic" : "none", "\n");
  return true;
}

}  // namespace zerograph
