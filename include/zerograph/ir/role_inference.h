#ifndef ZEROGRAPH_IR_ROLE_INFERENCE_H_
#define ZEROGRAPH_IR_ROLE_INFERENCE_H_

#include <cstdint>
#include <future>
#include <span>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/op_role.h"

namespace zerograph {

class Graph;
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

// InferRoleBits started before its spec is read: the sweep over the graph it needs
// (KnowableShapes) runs on another thread from construction, while the caller reads the training
// spec, as loading does.
class RoleInference {
 public:
  explicit RoleInference(const Graph& graph);
  RoleInference(const RoleInference&) = delete;
  RoleInference& operator=(const RoleInference&) = delete;

  // InferRoleBits(graph, spec); at most once.
  StatusOr<std::vector<int64_t>> Run(const ResolvedTrainingSpec& spec);

 private:
  const Graph& graph_;
  std::future<std::vector<char>> knowable_;  // KnowableShapes(graph_)
};

// Gives every node without `__op_role` its role from `role_bits` (InferRoleBits's answer), written
// as `__op_role`.
Status WriteMissingRoles(Graph& graph, std::span<const int64_t> role_bits);

// Gives every node without `__op_role` its inferred role: InferRoleBits, then WriteMissingRoles.
Status InferMissingRoles(Graph& graph, const TrainingSpec& spec);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_ROLE_INFERENCE_H_
