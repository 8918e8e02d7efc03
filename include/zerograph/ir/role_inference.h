#ifndef ZEROGRAPH_IR_ROLE_INFERENCE_H_
#define ZEROGRAPH_IR_ROLE_INFERENCE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/op_role.h"

namespace zerograph {

class Graph;
class Node;
struct ResolvedTrainingSpec;
struct TrainingSpec;

// The role each node would have without `__op_role` (docs/formats.md, "Training graph"), indexed by
// Node::id(): the loss and its ancestors are forward (the loss node also gets the loss bit);
// optimizer nodes are optimizer, and so, walking back from them, is every non-forward node with a
// single dynamic input all of whose users are optimizer nodes (gradient post-processing);
// everything else is backward. A dynamic input is one that is not constant (an initializer no
// optimizer updates and the state binding does not name, or a `Constant` output). Post-processing
// must also keep the gradient's shape: a shape-changing single-input node (the ReduceSum giving a
// bias gradient), or one whose shapes are neither recorded nor inferable from the op contracts,
// is backward. The op contract decides where it can from the node alone (an Identity, a Cast, a
// Mul by a constant scalar keep any shape they get; a ReduceSum with keepdims 0 changes it), once
// the input's shape is known to be inferable (KnowableShapes); InferShapes runs only for the rest.
// Returns the raw role bits; linear time. Fails when shape inference finds the graph inconsistent,
// naming the node.
StatusOr<std::vector<int64_t>> InferRoleBits(const Graph& graph, const TrainingSpec& spec);
// The same from a spec whose binding is resolved (its names may be left out): what loading uses.
StatusOr<std::vector<int64_t>> InferRoleBits(const Graph& graph, const ResolvedTrainingSpec& spec);

// The forward's part of InferRoleBits's answer, from the loss's name alone: the loss node and its
// ancestors forward (the loss node with the loss bit), -1 for every other node. A loader walks it
// beside reading the rest of the training spec.
StatusOr<std::vector<int64_t>> InferForwardRoleBits(const Graph& graph, std::string_view loss);

// Role inference in two steps, for a loader that reads each node as it is linked (on the core
// that is otherwise idle then, beside the op contract checks, see LinkFollower): Add reads nodes
// by themselves (the optimizers, the state they update, Constant nodes' outputs, whether their
// contracts make their shapes knowable), Run does the rest once the graph is loaded and its
// training spec read.
class RoleInference {
 public:
  RoleInference();
  ~RoleInference();
  RoleInference(const RoleInference&) = delete;
  RoleInference& operator=(const RoleInference&) = delete;

  // Reads `nodes` as loaded (their contracts as Node::contract gives them): every node of the
  // graph once, in any order. Thread-safe; it reads the nodes and their inputs' producers and
  // initializers, so it may run while later nodes are linked.
  void Add(std::span<const Node* const> nodes);
  // InferRoleBits(graph, spec), once every node of `graph` is added; `forward` is
  // InferForwardRoleBits(graph, spec.spec.loss).
  StatusOr<std::vector<int64_t>> Run(const Graph& graph, const ResolvedTrainingSpec& spec,
                                     std::vector<int64_t> forward) const;

  // What Add reads (role_inference.cc).
  struct NodesRead;

 private:
  std::mutex mutex_;  // guards what Add merges into read_
  std::unique_ptr<NodesRead> read_;
};

// Gives every node without `__op_role` its role from `role_bits` (InferRoleBits's answer), written
// as `__op_role`.
Status WriteMissingRoles(Graph& graph, std::span<const int64_t> role_bits);

// Gives every node without `__op_role` its inferred role: InferRoleBits, then WriteMissingRoles.
Status InferMissingRoles(Graph& graph, const TrainingSpec& spec);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_ROLE_INFERENCE_H_
