#include "zerograph/passes/gradient_control.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {
namespace {

constexpr std::string_view kPrefix = "zg.grad_control";

bool IsCollective(const Node& node) {
  return node.domain() == kZerographDomain &&
         (node.op_type() == "ReduceScatter" || node.op_type() == "AllGather" ||
          node.op_type() == "AllReduce");
}

// The gradients every update reads, split by whether each rank holds a shard of them (bucket
// updates) or all of them (parameters updated whole).
struct Updates {
  std::vector<Node*> nodes;  // in schedule order
  std::vector<Value*> shard_grads;
  std::vector<Value*> whole_grads;
};

StatusOr<Updates> FindUpdates(const Graph& graph) {
  Updates updates;
  for (Node* node : graph.nodes()) {
    const std::optional<OptimizerSignature> signature = FindOptimizerSignature(*node);
    if (!signature) continue;
    ZG_RETURN_IF_NOT(node->domain() == kZerographDomain, "optimizer node '", node->name(), "' (",
                     node->domain(), ".", node->op_type(),
                     ") takes no gradient control: clipping and loss scaling need org.zerograph's "
                     "AdamW or SGD");
    ZG_ASSIGN_OR_RETURN(std::vector<OptimizerSlot> slots, OptimizerSlots(*node, *signature));
    const size_t layout_inputs = static_cast<size_t>(signature->num_scalars) +
                                 (2 + static_cast<size_t>(signature->num_states)) * slots.size();
    ZG_RETURN_IF_NOT(node->num_inputs() == layout_inputs, "optimizer node '", node->name(),
                     "' already takes a gradient control input");
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

}  // namespace

StatusOr<bool> GradientControlPass::RunImpl(Graph& graph) {
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> read, ReadTrainingSpec(graph));
  ZG_RETURN_IF_NOT(read.has_value(),
                   "the graph has no zerograph.loss metadata, so it is not a training graph");
  TrainingSpec spec = std::move(*read);
  const float max_norm = options_.max_norm;
  ZG_RETURN_IF_NOT(std::isfinite(max_norm) && max_norm >= 0,
                   "the gradient clipping norm must be positive, got ", max_norm);
  if (max_norm == 0 && !spec.loss_scaling) {
    stats_ = "  nothing to do: no clipping norm, no loss scaling\n";
    return false;
  }
  ZG_ASSIGN_OR_RETURN(Updates updates, FindUpdates(graph));
  Node* const before = updates.nodes.front();
  auto add = [&](std::string_view op, std::span<Value* const> inputs,
                 std::vector<std::string> outputs) {
    Node* node = graph.AddNode(op, op == "Add" ? "" : kZerographDomain, inputs, outputs,
                               outputs.front(), before);
    node->SetRole(OpRole::kOptimize);
    return node;
  };

  Value* total = nullptr;
  if (!updates.shard_grads.empty()) {
    total =
        add("SumOfSquares", updates.shard_grads, {StrCat(kPrefix, ".shard_squares")})->output(0);
    graph.SetValueType(total, Fp32({}));
    if (spec.nranks.value_or(1) > 1) {
      Node* reduce = add("AllReduce", std::vector<Value*>{total}, {StrCat(kPrefix, ".squares")});
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
      graph.SetValueType(total, Fp32({}));
    }
  }
  if (!updates.whole_grads.empty()) {
    Value* whole =
        add("SumOfSquares", updates.whole_grads, {StrCat(kPrefix, ".whole_squares")})->output(0);
    graph.SetValueType(whole, Fp32({}));
    if (total != nullptr) {
      total = add("Add", std::vector<Value*>{total, whole}, {StrCat(kPrefix, ".all_squares")})
                  ->output(0);
      graph.SetValueType(total, Fp32({}));
    } else {
      total = whole;
    }
  }

  std::vector<Value*> inputs = {total};
  std::vector<std::string> outputs = {std::string(kPrefix)};
  if (spec.loss_scaling) {
    for (const std::string* state : {&spec.loss_scaling->scale, &spec.loss_scaling->good_steps}) {
      inputs.push_back(graph.FindValue(*state));
      outputs.push_back(StrCat(*state, ".new"));
    }
  }
  Node* control = graph.AddNode("GradientControl", kZerographDomain, inputs, outputs,
                                StrCat(kPrefix, ".control"), before);
  control->SetRole(OpRole::kOptimize);
  control->SetFloat("max_norm", max_norm);
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
  for (Node* update : updates.nodes) graph.AppendInput(update, control->output(0));

  stats_ = StrCat("  updates controlled: ", updates.nodes.size(), " (", updates.shard_grads.size(),
                  " sharded gradients, ", updates.whole_grads.size(), " whole)\n  clipping: ",
                  max_norm > 0 ? StrCat("global norm ", max_norm) : std::string("none"),
                  "\n  loss scaling: ", spec.loss_scaling ? "dynamic" : "none", "\n");
  return true;
}

}  // namespace zerograph
