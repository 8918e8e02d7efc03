#ifndef ZEROGRAPH_SRC_PASSES_SHARDING_CANDIDATES_H_
#define ZEROGRAPH_SRC_PASSES_SHARDING_CANDIDATES_H_

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/layout_manifest.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/tensor_type.h"

namespace zerograph {

class Graph;
class Node;
class Tensor;

// One parameter's update, as found in an optimizer node.
struct Candidate {
  OptimizerSlot slot;
  Node* optimizer = nullptr;
  OptimizerSignature signature;
  // Where the gradient becomes ready in backward (null: before the step starts).
  Node* ready = nullptr;
  // The gradient's chain (FindGradientChain, held by the sweep) when it leads to a backward op,
  // `ready`: for overlap (GradientChainHandoff).
  std::span<Node* const> chain;
  bool chain_reaches_ready = false;
  // Parameters with equal keys may share a bucket: same optimizer, attributes, scalar and control
  // inputs, and dtypes.
  int64_t key = 0;
  // Why the parameter stays whole; empty when it can be sharded.
  std::string whole_reason;
  // When it can be sharded, what the rewrite needs of it, read while sweeping: the parameter's
  // tensor and type, its layout entry (but for the offset and padding), and whether the updated
  // parameter has a recorded type.
  const Tensor* tensor = nullptr;
  std::vector<const Tensor*> state_tensors;
  TensorType param_type;
  LayoutManifest::Param layout;
  bool new_param_typed = false;
  // The gradient producer's Node::schedule_key() at the sweep (the lowest key when the gradient
  // has none). The rewrite adds nodes but moves none, so keys read together still compare.
  int64_t grad_producer_key = 0;
};

// Finds every parameter update of a graph. The sweep only reads the graph, so it runs on other
// threads from construction on, while the caller does other reading (the training spec); Finish
// joins in. The nodes are read in memory order, in slices claimed one at a time, for their
// optimizer slots; what each parameter needs (its tensors and their messages, the gradient's
// chain, each a cache miss or more: most of what finding the candidates costs on a large graph)
// is read in Finish, in parts of the candidates, as one optimizer node may hold them all.
class CandidateSweep {
 public:
  explicit CandidateSweep(const Graph& graph);
  ~CandidateSweep();
  CandidateSweep(const CandidateSweep&) = delete;
  CandidateSweep& operator=(const CandidateSweep&) = delete;

  struct Found {
    // In schedule order; they point into the sweep, which must outlive them.
    std::vector<Candidate*> candidates;
    // Nodes with the optimizer role that no known optimizer is and that make a graph output:
    // they may update state (unsupported optimizers), in schedule order. (Gradient
    // post-processing, optimizer-role nodes too, makes no graph output.)
    std::vector<Node*> other_optimize_nodes;
  };
  // Sweeps what is left, waits for the other threads, and checks that no gradient or parameter
  // has two updates. Fails on a graph already rewritten or a malformed optimizer node.
  StatusOr<Found> Finish();

 private:
  // What one slice of the nodes held, in the slice's order.
  struct Slice {
    // Grown a whole optimizer node at a time: a multi-tensor node holds every parameter, and
    // growing an element at a time on a sweeping thread grows that thread's heap a page at a time
    // (glibc, an mprotect call each). The pointers Finish hands out are taken once all is swept.
    std::vector<Candidate> candidates;
    std::vector<Node*> other_optimize_nodes;
    Status status;
  };

  void SweepSlices();
  // Finds the slice's optimizer nodes and makes a candidate of each slot.
  void SweepSlice(size_t index);
  // Fills in the rest of each candidate of `part`; the keys index `keys`, the distinct keys met
  // in the part, and the chains' nodes are kept in `chain_nodes`.
  static void ReadCandidates(std::span<Candidate* const> part, std::vector<std::string>& keys,
                             std::vector<Node*>& chain_nodes);

  const Graph& graph_;
  std::vector<Slice> slices_;
  // Per part of the candidates, the nodes of their gradient chains, one list a part rather than a
  // heap block a chain.
  std::vector<std::vector<Node*>> chain_nodes_;
  std::atomic<size_t> next_slice_{0};
  std::vector<std::thread> workers_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_PASSES_SHARDING_CANDIDATES_H_
