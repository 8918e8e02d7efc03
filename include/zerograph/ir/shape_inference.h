#ifndef ZEROGRAPH_IR_SHAPE_INFERENCE_H_
#define ZEROGRAPH_IR_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/tensor_spec.h"

namespace zerograph {

class Graph;
class Node;
class Value;
struct OpContract;

// The dtype and shape of every value whose type is recorded with known dimensions or follows
// from its producer's op contract. A side table: the graph is not changed, so a pass may infer
// shapes without changing what it writes.
class InferredShapes {
 public:
  // The value's spec, or null when neither recorded nor inferable (an op without a contract, a
  // symbolic dimension upstream, a host-read input whose value is not known before running).
  const TensorSpec* Find(const Value& value) const;

  // Values with a spec, and of those, how many were inferred rather than recorded.
  int64_t known() const { return known_; }
  int64_t inferred() const { return inferred_; }

 private:
  friend StatusOr<InferredShapes> InferShapes(const Graph&, int);
  std::vector<std::optional<TensorSpec>> specs_;  // by value id
  int64_t known_ = 0;
  int64_t inferred_ = 0;
};

// The spec recorded for `value` (value_info, graph input or output, initializer), when its type
// has every dimension; nullopt for a symbolic or unknown one.
std::optional<TensorSpec> RecordedSpec(const Value& value);

// Walks the schedule once, running each node's shape function (OpContract::infer) where its
// inputs are known. A recorded type wins over an inferred one; when both are known and disagree,
// or a shape function refuses its inputs, the error names the node. `nranks` is the ranks the
// graph runs on (LocalShard's shards), 0 for the graph's own `zerograph.nranks`, else 1.
StatusOr<InferredShapes> InferShapes(const Graph& graph, int nranks = 0);

// Which values InferShapes gives a spec, by value id, found without running a shape function: a
// value with a recorded complete type, or an output of a node with a contract whose inputs are
// all knowable, each host-read one an initializer. A fraction of InferShapes's time; it does not
// see a shape function refuse its inputs (InferShapes's errors).
std::vector<char> KnowableShapes(const Graph& graph);

// KnowableShapes in two steps, for a caller that reads each node as it is linked (loading does,
// on a core that is otherwise idle then): Add judges a node by itself, Finish does what needs the
// whole graph (its sources, the recorded types, which value_info gives, and the walk downstream
// of what breaks).
class KnowableShapeSweep {
 public:
  // Judges `node` by itself, by its op contract at the graph's opset (Node::contract); every node
  // of the graph once, in any order. It reads the node and its inputs' producers and
  // initializers, so it may run while later nodes are linked.
  void Add(const Node* node);
  // Takes in what another sweep of the same graph judged, of other nodes.
  void Merge(KnowableShapeSweep&& other);
  // Once every node is added and the graph is loaded: KnowableShapes(graph).
  std::vector<char> Finish(const Graph& graph) const;

 private:
  // Outputs of nodes whose contract does not make them knowable: knowable when recorded.
  std::vector<const Value*> unsure_outputs_;
  // Sources read by a node that are neither graph inputs nor initializers: sparse initializers.
  std::vector<const Value*> unknowable_sources_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_SHAPE_INFERENCE_H_
