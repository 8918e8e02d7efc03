#ifndef ZEROGRAPH_IR_TENSOR_SPEC_H_
#define ZEROGRAPH_IR_TENSOR_SPEC_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph {

// Dimensions of a tensor, outermost first; {} is a scalar.
using Shape = std::vector<int64_t>;

// A tensor's element type and fully known shape: what shape inference computes and what the
// executor plans memory with. (TensorType is the file's view, where dimensions may be unknown.)
struct TensorSpec {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

// "[2,3]", "[]".
std::string ShapeToString(std::span<const int64_t> shape);

// ONNX multidirectional (numpy) broadcasting: shapes align at the right; each dimension pair is
// equal or one of them is 1.
StatusOr<Shape> BroadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b);

// The shapes of a MatMul (numpy matmul) with 1-D operands promoted: a [..., M, K], b [..., K, N],
// batch dimensions broadcast.
struct MatMulShapes {
  Shape a_batch, b_batch, out_batch;
  int64_t m = 1, k = 1, n = 1;
  Shape out;
};
StatusOr<MatMulShapes> MatMulShapesOf(std::span<const int64_t> a, std::span<const int64_t> b);

// `axis` in [-rank, rank) made non-negative; InvalidArgument otherwise.
StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

// ONNX's reductions: which of `rank` axes `axes` reduces (every axis when `axes` is empty, unless
// `noop_with_empty_axes`, when none is and the op copies its input).
StatusOr<std::vector<bool>> ReducedAxes(std::span<const int64_t> axes, int64_t rank,
                                        bool noop_with_empty_axes);

// Transpose's permutation for an input of `rank`: `perm` checked, or the axes reversed.
StatusOr<std::vector<int64_t>> TransposePerm(const std::optional<std::vector<int64_t>>& perm,
                                             size_t rank);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_TENSOR_SPEC_H_
