#ifndef ZEROGRAPH_SRC_PASSES_NODE_SWEEP_H_
#define ZEROGRAPH_SRC_PASSES_NODE_SWEEP_H_

#include <cstddef>
#include <utility>
#include <vector>

#include "core/parallelism.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Reads every node of `graph` into a `Found`, which is default-constructible and has
// `void Add(Node*)` and `void Merge(const Found& later)`: in slices of the node pool
// (Graph::stored_nodes) on several threads, merged in slice order, so that the result is what one
// thread reading the pool in order finds. Not in schedule order: a large graph's nodes cost a
// cache miss each, and along the schedule's links one after another.
template <typename Found>
Found SweepStoredNodes(const Graph& graph) {
  // Nodes from which a sweeping thread pays for its start.
  constexpr size_t kNodesPerThread = 25'000;
  const int threads = ThreadsFor(static_cast<size_t>(graph.node_id_bound()), kNodesPerThread);
  std::vector<Found> slices(static_cast<size_t>(threads));
  const Status swept = ParallelFor(slices.size(), threads, [&](size_t i) {
    for (Node* node : graph.stored_nodes(i, slices.size())) slices[i].Add(node);
    return Status::Ok();
  });
  ZG_CHECK(swept.ok(), "reading the nodes cannot fail: ", swept.ToString());
  for (size_t i = 1; i < slices.size(); ++i) slices.front().Merge(slices[i]);
  return std::move(slices.front());
}

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_PASSES_NODE_SWEEP_H_
