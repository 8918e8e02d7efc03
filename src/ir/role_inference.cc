#include "zerograph/ir/role_inference.h"

#include <algorithm>
#include <cstddef>
#include <future>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/parallelism.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/shape_inference.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

// The dimensions of `value` when its recorded type has them all.
std::optional<Shape> RecordedDims(const Value& value) {
  std::optional<TensorType> type = value.type();
  if (!type || !type->dims) return std::nullopt;
  for (int64_t dim : *type->dims) {
    if (dim < 0) return std::nullopt;
  }
  return std::move(type->dims);
}

// Post-processing keeps a gradient's shape (casts, scales, clipping). A single-input node that
// changes it, such as the ReduceSum that turns a layer's output gradient into its bias gradient,
// is backward; where the shapes cannot be known, backward is the safe answer. Most nodes are
// decided by their op contract (OpContract::keeps_input_shape) and whether their input's shape
// can be known at all (KnowableShapes); the others by recorded types, or for graphs without
// value_info the contracts' shape inference, run once and only when a node needs it.
class ShapeComparer {
 public:
  // `knowable` is KnowableShapes(graph), computed on another thread meanwhile.
  ShapeComparer(const Graph& graph, std::future<std::vector<char>> knowable)
      : graph_(graph), contracts_(graph), knowable_future_(std::move(knowable)) {}

  // Whether every output of `node` has the known shape of its input `input` (their dtypes may
  // differ, as a Cast's do).
  StatusOr<bool> KeepsShape(const Node& node, size_t input) {
    const Value& in = *node.input(input);
    const OpContract* contract = contracts_.Find(node);
    if (node.num_outputs() == 1 && contract != nullptr && contract->keeps_input_shape != nullptr) {
      const std::optional<bool> keeps = contract->keeps_input_shape(node, input);
      if (keeps == false) return false;
      if (keeps == true) {
        if (!knowable_) knowable_ = knowable_future_.get();
        if ((*knowable_)[static_cast<size_t>(in.id())]) return true;
      }
    }
    for (const Value* output : node.outputs()) {
      if (output == nullptr) continue;
      ZG_ASSIGN_OR_RETURN(const bool same, SameKnownDims(*output, in));
      if (!same) return false;
    }
    return true;
  }

 private:
  // Whether `a` and `b` have the same known dimensions.
  StatusOr<bool> SameKnownDims(const Value& a, const Value& b) {
    std::optional<Shape> recorded_a = RecordedDims(a);
    std::optional<Shape> recorded_b = RecordedDims(b);
    if (recorded_a && recorded_b) return *recorded_a == *recorded_b;
    if (!inferred_) {
      StatusOr<InferredShapes> shapes = InferShapes(graph_);
      if (!shapes.ok()) {
        return std::move(shapes).status().WithContext(
            "role inference needs the gradients' shapes, which value_info does not record");
      }
      inferred_ = std::move(*shapes);
    }
    const TensorSpec* spec_a = inferred_->Find(a);
    const TensorSpec* spec_b = inferred_->Find(b);
    return spec_a != nullptr && spec_b != nullptr && spec_a->shape == spec_b->shape;
  }

  const Graph& graph_;
  GraphContracts contracts_;
  std::future<std::vector<char>> knowable_future_;
  std::optional<std::vector<char>> knowable_;
  std::optional<InferredShapes> inferred_;
};

// Nodes whose roles are written per task, and nodes from which a writing thread pays for its
// start.
constexpr size_t kNodesPerSlice = 4096;
constexpr size_t kNodesPerThread = 25000;

bool IsConstantNode(const Node& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "Constant";
}

// The sweep InferRoleBitsOf needs, started on another thread: the walk back needs to know which
// shapes can be known, and the walks before it run meanwhile.
std::future<std::vector<char>> StartKnowableShapes(const Graph& graph) {
  return RunOnTheSide([&graph] { return KnowableShapes(graph); });
}

// By value id: state (what an optimizer updates or the binding replaces) and Constant nodes'
// outputs; by node id: the optimizers.
struct StateMarks {
  std::vector<bool> is_state, is_constant_output, is_optimizer;
};

// The marks, with `bound_states` the state binding's old values (null where a name is unknown).
// An optimizer's inputs are its scalars, then groups of n: X, G (not state), the states. The sweep
// needs no order, so it reads the nodes where they lie in memory (Graph::stored_nodes).
StateMarks MarkStateAndOptimizers(const Graph& graph, std::span<const Value* const> bound_states) {
  const auto num_value_ids = static_cast<size_t>(graph.value_id_bound());
  StateMarks marks{.is_state = std::vector<bool>(num_value_ids),
                   .is_constant_output = std::vector<bool>(num_value_ids),
                   .is_optimizer = std::vector<bool>(static_cast<size_t>(graph.node_id_bound()))};
  for (const Node* node : graph.stored_nodes()) {
    if (IsConstantNode(*node)) {
      for (const Value* output : node->outputs()) {
        if (output != nullptr) marks.is_constant_output[output->id()] = true;
      }
      continue;
    }
    std::optional<OptimizerSignature> signature = FindOptimizerSignature(*node);
    if (!signature) continue;
    marks.is_optimizer[static_cast<size_t>(node->id())] = true;
    const size_t scalars = static_cast<size_t>(signature->num_scalars);
    const size_t groups = 2 + static_cast<size_t>(signature->num_states);
    if (node->num_inputs() < scalars) continue;
    const size_t n = (node->num_inputs() - scalars) / groups;
    for (size_t group = 0; group < groups; ++group) {
      if (group == 1) continue;
      for (size_t i = 0; i < n; ++i) {
        const Value* input = node->input(scalars + group * n + i);
        if (input != nullptr) marks.is_state[input->id()] = true;
      }
    }
  }
  for (const Value* old_value : bound_states) {
    if (old_value != nullptr) marks.is_state[old_value->id()] = true;
  }
  return marks;
}

// InferRoleBits, with the state binding's old values (null where a name is unknown) and
// `knowable`, StartKnowableShapes(graph).
StatusOr<std::vector<int64_t>> InferRoleBitsOf(const Graph& graph, std::string_view loss_name,
                                               std::span<const Value* const> bound_states,
                                               std::future<std::vector<char>> knowable) {
  const Value* loss = graph.FindValue(loss_name);
  ZG_RETURN_IF_NOT(loss != nullptr, "role inference: loss '", loss_name,
                   "' is no value of the graph");
  ZG_RETURN_IF_NOT(loss->producer() != nullptr, "role inference: loss '", loss_name,
                   "' is not computed by a node");

  // The schedule, for the walk back, is read on another thread while the walk and sweep before it
  // run.
  std::future<std::vector<Node*>> schedule =
      RunOnTheSide([&graph] { return graph.ScheduledNodes(); });
  const auto num_node_ids = static_cast<size_t>(graph.node_id_bound());
  constexpr int64_t kUnset = -1;
  std::vector<int64_t> roles(num_node_ids, kUnset);

  // Mutable state: what an optimizer updates, and what the state binding replaces. Every other
  // initializer is a constant, always ready, so it does not count as a dynamic input; nor does a
  // Constant node's output, marked here so that the walk back need not read each input's producer
  // (a cache miss per edge on a large graph). Swept on another thread while this one walks
  // forward: neither reads what the other writes.
  std::future<StateMarks> marked =
      RunOnTheSide([&graph, bound_states] { return MarkStateAndOptimizers(graph, bound_states); });

  // Forward: the loss node and its ancestors, by a walk over producers.
  std::vector<const Node*> stack = {loss->producer()};
  roles[loss->producer()->id()] = static_cast<int64_t>(OpRole::kForward);
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const Value* input : node->inputs()) {
      if (input == nullptr || input->producer() == nullptr) continue;
      const Node* producer = input->producer();
      if (roles[producer->id()] != kUnset) continue;
      roles[producer->id()] = static_cast<int64_t>(OpRole::kForward);
      stack.push_back(producer);
    }
  }
  roles[loss->producer()->id()] |= kLossRoleBit;

  const StateMarks marks = marked.get();
  auto is_dynamic = [&marks](const Value* value) {
    if (value == nullptr) return false;
    if (value->initializer() != nullptr) return static_cast<bool>(marks.is_state[value->id()]);
    return !marks.is_constant_output[value->id()];
  };

  ShapeComparer shapes(graph, std::move(knowable));
  // Optimizer: optimizer ops, then, walking back, gradient post-processing. Users come later in
  // the schedule than their producers, so one reverse pass sees every user decided.
  const std::vector<Node*> scheduled = schedule.get();
  for (auto it = scheduled.rbegin(); it != scheduled.rend(); ++it) {
    const Node* node = *it;
    int64_t& role = roles[node->id()];
    if (role != kUnset) continue;  // forward
    role = static_cast<int64_t>(OpRole::kBackward);
    if (marks.is_optimizer[static_cast<size_t>(node->id())]) {
      role = static_cast<int64_t>(OpRole::kOptimize);
      continue;
    }
    size_t dynamic_input = 0;
    size_t dynamic_inputs = 0;
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      if (!is_dynamic(node->input(i))) continue;
      dynamic_input = i;
      ++dynamic_inputs;
    }
    if (dynamic_inputs != 1) continue;
    bool has_user = false;
    bool all_users_optimizer = true;
    for (const Value* output : node->outputs()) {
      if (output == nullptr) continue;
      // A graph output is read outside the step, by no optimizer.
      if (output->is_graph_output()) all_users_optimizer = false;
      for (const Use& use : output->users()) {
        has_user = true;
        if (roles[use.node->id()] != static_cast<int64_t>(OpRole::kOptimize)) {
          all_users_optimizer = false;
        }
      }
    }
    if (!has_user || !all_users_optimizer) continue;
    // Shapes last: they may take shape inference over the whole graph.
    ZG_ASSIGN_OR_RETURN(const bool keeps_shape, shapes.KeepsShape(*node, dynamic_input));
    if (keeps_shape) role = static_cast<int64_t>(OpRole::kOptimize);
  }
  return roles;
}

}  // namespace

StatusOr<std::vector<int64_t>> InferRoleBits(const Graph& graph, const TrainingSpec& spec) {
  std::future<std::vector<char>> knowable = StartKnowableShapes(graph);
  // Looked up in bulk, which overlaps the lookups' cache misses (a state binding may name every
  // parameter and state of the model).
  std::vector<std::string_view> bound_names;
  bound_names.reserve(spec.state_binding.size());
  for (const auto& binding : spec.state_binding) bound_names.push_back(binding.second);
  const std::vector<Value*> bound_states = graph.FindValues(bound_names);
  return InferRoleBitsOf(graph, spec.loss, bound_states, std::move(knowable));
}

StatusOr<std::vector<int64_t>> InferRoleBits(const Graph& graph, const ResolvedTrainingSpec& spec) {
  return RoleInference(graph).Run(spec);
}

RoleInference::RoleInference(const Graph& graph)
    : graph_(graph), knowable_(StartKnowableShapes(graph)) {}

StatusOr<std::vector<int64_t>> RoleInference::Run(const ResolvedTrainingSpec& spec) {
  ZG_CHECK(knowable_.valid(), "RoleInference::Run runs once");
  return InferRoleBitsOf(graph_, spec.spec.loss, spec.binding_old_values, std::move(knowable_));
}

Status WriteMissingRoles(Graph& graph, std::span<const int64_t> role_bits) {
  // Each node is read and written where it lies, a cache miss a node: slices of the pool, on two
  // threads from 25k nodes. (SetRole searches the attributes only of a node loaded with a
  // `__op_role` of another type.)
  const size_t slices =
      (static_cast<size_t>(graph.node_id_bound()) + kNodesPerSlice - 1) / kNodesPerSlice;
  return ParallelFor(slices, ThreadsFor(graph.num_nodes(), kNodesPerThread), [&](size_t s) {
    for (Node* node : graph.stored_nodes(s, slices)) {
      if (node->has_role()) continue;
      const int64_t bits = role_bits[static_cast<size_t>(node->id())];
      node->SetRole(static_cast<OpRole>(bits & ~kLossRoleBit), (bits & kLossRoleBit) != 0);
    }
    return Status::Ok();
  });
}

Status InferMissingRoles(Graph& graph, const TrainingSpec& spec) {
  const StoredNodeRange nodes = graph.stored_nodes();
  if (std::all_of(nodes.begin(), nodes.end(), [](const Node* node) { return node->has_role(); })) {
    return Status::Ok();
  }
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> roles, InferRoleBits(graph, spec));
  return WriteMissingRoles(graph, roles);
}

}  // namespace zerograph
