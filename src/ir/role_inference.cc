#include "zerograph/ir/role_inference.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/parallelism.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/node_sweep.h"
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
// value_info the contracts' shape inference, run once and only when a node needs it. Threads may
// ask at once: what is worked out once is worked out under a once_flag.
class ShapeComparer {
 public:
  // `knowable` is KnowableShapes(graph), computed on another thread meanwhile.
  ShapeComparer(const Graph& graph, std::future<std::vector<char>> knowable)
      : graph_(graph), knowable_future_(std::move(knowable)) {}

  // Whether every output of `node` has the known shape of its input `input` (their dtypes may
  // differ, as a Cast's do).
  StatusOr<bool> KeepsShape(const Node& node, size_t input) {
    const Value& in = *node.input(input);
    const OpContract* contract = node.contract();
    if (node.num_outputs() == 1 && contract != nullptr && contract->keeps_input_shape != nullptr) {
      const std::optional<bool> keeps = contract->keeps_input_shape(node, input);
      if (keeps == false) return false;
      if (keeps == true) {
        std::call_once(knowable_once_, [this] { knowable_ = knowable_future_.get(); });
        if (knowable_[static_cast<size_t>(in.id())]) return true;
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
    std::call_once(inferred_once_, [this] { inferred_.emplace(InferShapes(graph_)); });
    if (!inferred_->ok()) {
      return inferred_->status().WithContext(
          "role inference needs the gradients' shapes, which value_info does not record");
    }
    const TensorSpec* spec_a = (*inferred_)->Find(a);
    const TensorSpec* spec_b = (*inferred_)->Find(b);
    return spec_a != nullptr && spec_b != nullptr && spec_a->shape == spec_b->shape;
  }

  const Graph& graph_;
  std::future<std::vector<char>> knowable_future_;
  std::once_flag knowable_once_;
  std::vector<char> knowable_;
  std::once_flag inferred_once_;
  std::optional<StatusOr<InferredShapes>> inferred_;
};

// Nodes whose roles are written per task, and nodes from which a writing thread pays for its
// start.
constexpr size_t kNodesPerSlice = 4096;
constexpr size_t kNodesPerThread = 25000;

// Optimizer inputs walked back from per task, and from which a walking thread pays for its start.
constexpr size_t kInputsPerSlice = 4096;
constexpr size_t kInputsPerThread = 25000;

// Inputs [begin, end) of an optimizer node.
struct InputSlice {
  const Node* user;
  size_t begin, end;
};

bool IsConstantNode(const Node& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "Constant";
}

// A node's role before it is decided.
constexpr int64_t kUnset = -1;

// By value id: state (what an optimizer updates or the binding replaces) and Constant nodes'
// outputs.
struct StateMarks {
  std::vector<bool> is_state, is_constant_output;
};

}  // namespace

// What role inference reads of each node by itself (RoleInference::Add).
struct RoleInference::NodesRead {
  KnowableShapeSweep knowable;
  std::vector<const Value*> constant_outputs;  // of Constant nodes
  std::vector<const Node*> optimizers;
  std::vector<const Value*> states;  // what the optimizers update

  void Add(const Node* node);
  void Merge(NodesRead&& other);
};

// What the marks need of each node by itself: Constant nodes' outputs, the optimizers, and the
// state they update. An optimizer's inputs are its scalars, then groups of n: X, G (not state),
// the states.
void RoleInference::NodesRead::Add(const Node* node) {
  knowable.Add(node);
  if (IsConstantNode(*node)) {
    for (const Value* output : node->outputs()) {
      if (output != nullptr) constant_outputs.push_back(output);
    }
    return;
  }
  std::optional<OptimizerSignature> signature = FindOptimizerSignature(*node);
  if (!signature) return;
  optimizers.push_back(node);
  const size_t scalars = static_cast<size_t>(signature->num_scalars);
  const size_t groups = 2 + static_cast<size_t>(signature->num_states);
  if (node->num_inputs() < scalars) return;
  const size_t n = (node->num_inputs() - scalars) / groups;
  for (size_t group = 0; group < groups; ++group) {
    if (group == 1) continue;
    for (size_t i = 0; i < n; ++i) {
      const Value* input = node->input(scalars + group * n + i);
      if (input != nullptr) states.push_back(input);
    }
  }
}

void RoleInference::NodesRead::Merge(NodesRead&& other) {
  knowable.Merge(std::move(other.knowable));
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(constant_outputs, other.constant_outputs);
  append(optimizers, other.optimizers);
  append(states, other.states);
}

namespace {

// The marks, from what the nodes gave and `bound_states`, the state binding's old values (null
// where a name is unknown).
StateMarks MarkState(const Graph& graph, const RoleInference::NodesRead& read,
                     std::span<const Value* const> bound_states) {
  const auto num_value_ids = static_cast<size_t>(graph.value_id_bound());
  StateMarks marks{.is_state = std::vector<bool>(num_value_ids),
                   .is_constant_output = std::vector<bool>(num_value_ids)};
  for (const Value* output : read.constant_outputs) marks.is_constant_output[output->id()] = true;
  for (const Value* state : read.states) marks.is_state[state->id()] = true;
  for (const Value* old_value : bound_states) {
    if (old_value != nullptr) marks.is_state[old_value->id()] = true;
  }
  return marks;
}

}  // namespace

StatusOr<std::vector<int64_t>> InferForwardRoleBits(const Graph& graph,
                                                    std::string_view loss_name) {
  const Value* loss = graph.FindValue(loss_name);
  ZG_RETURN_IF_NOT(loss != nullptr, "role inference: loss '", loss_name,
                   "' is no value of the graph");
  ZG_RETURN_IF_NOT(loss->producer() != nullptr, "role inference: loss '", loss_name,
                   "' is not computed by a node");
  std::vector<int64_t> roles(static_cast<size_t>(graph.node_id_bound()), kUnset);
  // The loss node and its ancestors, by a walk over producers.
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
  return roles;
}

namespace {

// InferRoleBits, from the forward's roles (InferForwardRoleBits), the state binding's old values
// (null where a name is unknown) and what RoleInference::Add read of every node.
StatusOr<std::vector<int64_t>> InferRoleBitsOf(const Graph& graph, std::vector<int64_t> roles,
                                               std::span<const Value* const> bound_states,
                                               const RoleInference::NodesRead& read) {
  // Post-processing needs to know which shapes can be known: found on another thread meanwhile.
  std::future<std::vector<char>> knowable =
      RunOnTheSide([&graph, &read] { return read.knowable.Finish(graph); });

  // Mutable state: what an optimizer updates, and what the state binding replaces. Every other
  // initializer is a constant, always ready, so it does not count as a dynamic input; nor does a
  // Constant node's output, marked here so that the walk back need not read each input's producer
  // (a cache miss per edge on a large graph).
  const StateMarks marks = MarkState(graph, read, bound_states);
  constexpr auto kBackward = static_cast<int64_t>(OpRole::kBackward);
  constexpr auto kOptimize = static_cast<int64_t>(OpRole::kOptimize);
  std::replace(roles.begin(), roles.end(), kUnset, kBackward);

  auto is_dynamic = [&marks](const Value* value) {
    if (value == nullptr) return false;
    if (value->initializer() != nullptr) return static_cast<bool>(marks.is_state[value->id()]);
    return !marks.is_constant_output[value->id()];
  };
  // Decided roles are read and written by several threads below, each through an atomic_ref.
  auto role_of = [&roles](const Node& node) {
    return std::atomic_ref<int64_t>(roles[static_cast<size_t>(node.id())]);
  };
  ShapeComparer shapes(graph, std::move(knowable));
  // Whether `node`, backward so far, post-processes a gradient for the optimizer.
  auto is_post_processing = [&](const Node& node) -> StatusOr<bool> {
    size_t dynamic_input = 0;
    size_t dynamic_inputs = 0;
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      if (!is_dynamic(node.input(i))) continue;
      dynamic_input = i;
      ++dynamic_inputs;
    }
    if (dynamic_inputs != 1) return false;
    bool has_user = false;
    for (const Value* output : node.outputs()) {
      if (output == nullptr) continue;
      // A graph output is read outside the step, by no optimizer.
      if (output->is_graph_output()) return false;
      for (const Use& use : output->users()) {
        if (role_of(*use.node).load() != kOptimize) return false;
        has_user = true;
      }
    }
    if (!has_user) return false;
    // Shapes last: they may take shape inference over the whole graph.
    return shapes.KeepsShape(node, dynamic_input);
  };

  // Optimizer: the optimizer ops outside the forward, then, walking back from them, gradient
  // post-processing: a node once all its users are optimizer. So each producer is looked at when
  // one of its users becomes optimizer, and only those: most of a large graph's backward is never
  // read again.
  std::vector<InputSlice> slices;
  size_t optimizer_inputs = 0;
  for (const Node* node : read.optimizers) {
    if (roles[node->id()] != kBackward) continue;  // forward
    roles[node->id()] = kOptimize;
    for (size_t begin = 0; begin < node->num_inputs(); begin += kInputsPerSlice) {
      slices.push_back({node, begin, std::min(begin + kInputsPerSlice, node->num_inputs())});
    }
    optimizer_inputs += node->num_inputs();
  }
  // Looks at the producers of `user`'s inputs [begin, end) and, from each it decides, at theirs.
  auto walk_back = [&](const Node& user, size_t begin, size_t end) -> Status {
    std::vector<const Node*> decided;
    auto look_at_producer = [&](const Value* input) -> Status {
      if (input == nullptr || input->producer() == nullptr) return Status::Ok();
      const Node& node = *input->producer();
      if (role_of(node).load() != kBackward) return Status::Ok();
      ZG_ASSIGN_OR_RETURN(const bool post_processing, is_post_processing(node));
      int64_t backward = kBackward;
      if (post_processing && role_of(node).compare_exchange_strong(backward, kOptimize)) {
        decided.push_back(&node);
      }
      return Status::Ok();
    };
    for (size_t i = begin; i < end; ++i) ZG_RETURN_IF_ERROR(look_at_producer(user.input(i)));
    while (!decided.empty()) {
      const Node* node = decided.back();
      decided.pop_back();
      for (const Value* input : node->inputs()) ZG_RETURN_IF_ERROR(look_at_producer(input));
    }
    return Status::Ok();
  };
  // The walk is a cache miss or more per edge, and one optimizer node may read every gradient of
  // the model: its inputs are shared out in slices, each walked back from on a thread. A node is
  // decided by a thread that sees all its users optimizer. The thread whose decision made the last
  // of them so sees the others' too, as every role is read and written in one total order
  // (sequentially consistent); of two threads that see it, one claims the node.
  ZG_RETURN_IF_ERROR(ParallelFor(
      slices.size(), ThreadsFor(optimizer_inputs, kInputsPerThread),
      [&](size_t s) { return walk_back(*slices[s].user, slices[s].begin, slices[s].end); }));
  return roles;
}

}  // namespace

StatusOr<std::vector<int64_t>> InferRoleBits(const Graph& graph, const TrainingSpec& spec) {
  // Looked up in bulk, which overlaps the lookups' cache misses (a state binding may name every
  // parameter and state of the model).
  std::vector<std::string_view> bound_names;
  bound_names.reserve(spec.state_binding.size());
  for (const auto& binding : spec.state_binding) bound_names.push_back(binding.second);
  const std::vector<Value*> bound_states = graph.FindValues(bound_names);
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> forward, InferForwardRoleBits(graph, spec.loss));
  return InferRoleBitsOf(graph, std::move(forward), bound_states,
                         SweepStoredNodes<RoleInference::NodesRead>(graph));
}

StatusOr<std::vector<int64_t>> InferRoleBits(const Graph& graph, const ResolvedTrainingSpec& spec) {
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> forward, InferForwardRoleBits(graph, spec.spec.loss));
  return InferRoleBitsOf(graph, std::move(forward), spec.binding_old_values,
                         SweepStoredNodes<RoleInference::NodesRead>(graph));
}

RoleInference::RoleInference() : read_(std::make_unique<NodesRead>()) {}

RoleInference::~RoleInference() = default;

void RoleInference::Add(std::span<const Node* const> nodes) {
  NodesRead read;
  for (const Node* node : nodes) read.Add(node);
  std::lock_guard<std::mutex> lock(mutex_);
  read_->Merge(std::move(read));
}

StatusOr<std::vector<int64_t>> RoleInference::Run(const Graph& graph,
                                                  const ResolvedTrainingSpec& spec,
                                                  std::vector<int64_t> forward) const {
  return InferRoleBitsOf(graph, std::move(forward), spec.binding_old_values, *read_);
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
