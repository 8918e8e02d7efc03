#ifndef ZEROGRAPH_IR_DATA_MOVEMENT_SHAPES_H_
#define ZEROGRAPH_IR_DATA_MOVEMENT_SHAPES_H_

// The index arithmetic of ONNX's data-movement ops, shared by their contracts' shape functions and
// by the kernels of every device, which redo it on the host values at run time.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/tensor_spec.h"

namespace zerograph {

// Where Slice reads along every dimension: output element i of dimension d comes from input
// index start[d] + i·step[d].
struct SliceRanges {
  std::vector<int64_t> start;
  std::vector<int64_t> step;
  Shape out;
};
// numpy's slicing per ONNX: negative starts and ends count from the back, out-of-range ones are
// clamped (to [0, dim] for positive steps, [-1, dim - 1] for negative ones); `axes` defaults to
// 0..n-1 and `steps` to 1.
StatusOr<SliceRanges> ResolveSlice(std::span<const int64_t> shape, std::span<const int64_t> starts,
                                   std::span<const int64_t> ends,
                                   std::optional<std::span<const int64_t>> axes,
                                   std::optional<std::span<const int64_t>> steps);

// The sizes of Split's outputs along a dimension of `dim`: `split` when given (it must sum to
// dim), else `num_outputs` equal parts, the last one smaller when dim does not divide (opset 18's
// num_outputs; before it the parts must be equal).
StatusOr<std::vector<int64_t>> ResolveSplit(int64_t dim, std::optional<std::vector<int64_t>> split,
                                            size_t num_outputs, bool last_may_be_smaller);

// Squeeze: removes the `axes` (each of size 1), or every dimension of size 1 when none are given.
StatusOr<Shape> SqueezedShape(std::span<const int64_t> shape,
                              std::optional<std::span<const int64_t>> axes);
// Unsqueeze: inserts a 1 at each of `axes`, which index the output.
StatusOr<Shape> UnsqueezedShape(std::span<const int64_t> shape, std::span<const int64_t> axes);

// The dimensions of `shape` before `axis`, at it, and after it (Gather, Concat, Split):
// outer·dim·inner elements.
struct AxisSplit {
  int64_t outer = 1;
  int64_t dim = 1;
  int64_t inner = 1;
};
AxisSplit SplitAtAxis(std::span<const int64_t> shape, size_t axis);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_DATA_MOVEMENT_SHAPES_H_
