#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_BROADCAST_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_BROADCAST_H_

#include <cstdint>
#include <span>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/runtime/device_tensor.h"

namespace zerograph::runtime {

// Walking broadcast operands, shared by the CPU loops and the CUDA kernels' index setup (the
// broadcast shape itself is the IR's BroadcastShapes).

// How to walk the output of a broadcast: dimensions collapsed as far as every operand allows,
// each operand's strides (0 along broadcast dimensions), innermost last, at least one dimension.
struct BroadcastPlan {
  Shape dims;
  std::vector<Shape> strides;  // per operand
};
// `inputs` each broadcast to `out` (unidirectionally: the caller checked that they do).
BroadcastPlan PlanBroadcast(std::span<const int64_t> out,
                            std::span<const std::span<const int64_t>> inputs);

// A plan over `dims` (a contiguous output) with explicit per-operand strides, collapsed.
BroadcastPlan CollapsePlan(std::span<const int64_t> dims, std::vector<Shape> strides);

// Calls fn(offsets, n) for each innermost run of the output in order, where offsets[k] is operand
// k's element offset at the start of the run and the output offset advances by n each call.
template <typename Fn>
void ForEachRun(const BroadcastPlan& plan, Fn&& fn) {
  const size_t rank = plan.dims.size();
  const size_t operands = plan.strides.size();
  const int64_t inner = plan.dims[rank - 1];
  if (inner == 0) return;
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < rank; ++d) outer *= plan.dims[d];
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> offsets(operands, 0);
  for (int64_t run = 0; run < outer; ++run) {
    fn(std::span<const int64_t>(offsets), inner);
    // Odometer over the outer dimensions.
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < plan.dims[d]) {
        for (size_t k = 0; k < operands; ++k) offsets[k] += plan.strides[k][d];
        break;
      }
      index[d] = 0;
      for (size_t k = 0; k < operands; ++k) offsets[k] -= plan.strides[k][d] * (plan.dims[d] - 1);
    }
  }
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_BROADCAST_H_
