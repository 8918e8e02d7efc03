#ifndef ZEROGRAPH_IR_NODE_SWEEP_H_
#define ZEROGRAPH_IR_NODE_SWEEP_H_

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "zerograph/ir/graph.h"

namespace zerograph {
namespace internal {

// How many slices SweepStoredNodes reads `graph` in: one per thread it pays to start.
size_t NodeSweepSlices(const Graph& graph);
// Runs read_slice(0) ... read_slice(slices - 1), each on a thread of its own.
void ReadSlices(size_t slices, const std::function<void(size_t slice)>& read_slice);

}  // namespace internal

// Reads every node of `graph` into a `Found`, which is default-constructible and has
// `void Add(Node*)` and `void Merge(Found&& later)` (or `const Found&`): in slices of the node pool
// (Graph::stored_nodes) on several threads, merged in slice order, so that the result is what one
// thread reading the pool in order finds. Not in schedule order: a large graph's nodes cost a
// cache miss each, and along the schedule's links one after another.
template <typename Found>
Found SweepStoredNodes(const Graph& graph) {
  std::vector<Found> slices(internal::NodeSweepSlices(graph));
  internal::ReadSlices(slices.size(), [&](size_t i) {
    for (Node* node : graph.stored_nodes(i, slices.size())) slices[i].Add(node);
  });
  for (size_t i = 1; i < slices.size(); ++i) slices.front().Merge(std::move(slices[i]));
  return std::move(slices.front());
}

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_NODE_SWEEP_H_
