#include "zerograph/ir/node_sweep.h"

#include <cstddef>
#include <functional>

#include "core/parallelism.h"
#include "zerograph/core/status.h"

namespace zerograph::internal {

size_t NodeSweepSlices(const Graph& graph) {
  // Nodes from which a sweeping thread pays for its start.
  constexpr size_t kNodesPerThread = 25'000;
  return static_cast<size_t>(
      ThreadsFor(static_cast<size_t>(graph.node_id_bound()), kNodesPerThread));
}

void ReadSlices(size_t slices, const std::function<void(size_t slice)>& read_slice) {
  const Status read = ParallelFor(slices, static_cast<int>(slices), [&](size_t i) {
    read_slice(i);
    return Status::Ok();
  });
  ZG_CHECK(read.ok(), "reading the nodes cannot fail: ", read.ToString());
}

}  // namespace zerograph::internal
