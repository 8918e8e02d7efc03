#ifndef ZEROGRAPH_IR_FUSED_MATMUL_SHAPES_H_
#define ZEROGRAPH_IR_FUSED_MATMUL_SHAPES_H_

#include <cstdint>
#include <span>

#include "zerograph/core/status.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/tensor_spec.h"

namespace zerograph {

// One operand of ONNX Runtime's FusedMatMul as a BLAS call reads it, in place: `batch` matrices of
// [rows, cols] as stored, matrix i at element i·batch_stride, rows `ld` elements apart; `trans`
// multiplies by the matrix's transpose.
struct MatMulOperand {
  Shape batch;
  int64_t rows = 1, cols = 1, ld = 1, batch_stride = 0;
  bool trans = false;
};

// FusedMatMul's attributes.
struct FusedMatMulOptions {
  bool trans_a = false, trans_b = false, trans_batch_a = false, trans_batch_b = false;
};
// The node's, with its op contract's defaults.
StatusOr<FusedMatMulOptions> FusedMatMulOptionsOf(const Node& node);

// Y = A'·B' with batches broadcast (numpy matmul), where X' is X with transBatch's permutation
// (1, ..., r-2, 0, r-1: the first dimension moves behind the batch dimensions) and then trans's
// swap of the last two. A 1-D operand is a row (A) or column (B) vector, as in MatMul; the
// transposes do not apply to it.
struct FusedMatMulShapes {
  MatMulOperand a, b;
  Shape out_batch;
  int64_t m = 1, k = 1, n = 1;
  Shape out;
};
StatusOr<FusedMatMulShapes> FusedMatMulShapesOf(std::span<const int64_t> a,
                                                std::span<const int64_t> b,
                                                const FusedMatMulOptions& options);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_FUSED_MATMUL_SHAPES_H_
