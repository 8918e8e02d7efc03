#include "zerograph/ir/fused_matmul_shapes.h"

#include "zerograph/core/num_elements.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph {
namespace {

// How `shape` lies as a batch of matrices: with `trans_batch` (rank 3 or more) the matrix is
// [d0, d_last] with the batch dimensions between, so its rows are a whole batch apart.
MatMulOperand OperandOf(std::span<const int64_t> shape, bool trans, bool trans_batch) {
  MatMulOperand op;
  const size_t r = shape.size();
  if (r >= 3 && trans_batch) {
    op.batch.assign(shape.begin() + 1, shape.end() - 1);
    op.rows = shape[0];
    op.cols = shape[r - 1];
    op.ld = NumElements(op.batch) * op.cols;
    op.batch_stride = op.cols;
  } else {
    op.batch.assign(shape.begin(), shape.end() - 2);
    op.rows = shape[r - 2];
    op.cols = shape[r - 1];
    op.ld = op.cols;
    op.batch_stride = op.rows * op.cols;
  }
  op.trans = trans;
  return op;
}

}  // namespace

StatusOr<FusedMatMulOptions> FusedMatMulOptionsOf(const Node& node) {
  FusedMatMulOptions options;
  ZG_ASSIGN_OR_RETURN(int64_t trans_a, ContractInt(node, "transA"));
  ZG_ASSIGN_OR_RETURN(int64_t trans_b, ContractInt(node, "transB"));
  ZG_ASSIGN_OR_RETURN(int64_t trans_batch_a, ContractInt(node, "transBatchA"));
  ZG_ASSIGN_OR_RETURN(int64_t trans_batch_b, ContractInt(node, "transBatchB"));
  options.trans_a = trans_a != 0;
  options.trans_b = trans_b != 0;
  options.trans_batch_a = trans_batch_a != 0;
  options.trans_batch_b = trans_batch_b != 0;
  return options;
}

StatusOr<FusedMatMulShapes> FusedMatMulShapesOf(std::span<const int64_t> a,
                                                std::span<const int64_t> b,
                                                const FusedMatMulOptions& options) {
  ZG_RETURN_IF_NOT(!a.empty() && !b.empty(), "FusedMatMul of a scalar: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  const Shape a_row = {1, a[0]};
  const Shape b_column = {b[0], 1};
  FusedMatMulShapes s;
  s.a = a_vector ? OperandOf(a_row, false, false)
                 : OperandOf(a, options.trans_a, options.trans_batch_a);
  s.b = b_vector ? OperandOf(b_column, false, false)
                 : OperandOf(b, options.trans_b, options.trans_batch_b);
  s.m = s.a.trans ? s.a.cols : s.a.rows;
  s.k = s.a.trans ? s.a.rows : s.a.cols;
  const int64_t kb = s.b.trans ? s.b.cols : s.b.rows;
  s.n = s.b.trans ? s.b.rows : s.b.cols;
  ZG_RETURN_IF_NOT(s.k == kb, "FusedMatMul inner dimensions differ: ", ShapeToString(a), " x ",
                   ShapeToString(b), " (A' has ", s.k, " columns, B' ", kb, " rows)");
  ZG_ASSIGN_OR_RETURN(s.out_batch, BroadcastShapes(s.a.batch, s.b.batch));
  s.out = s.out_batch;
  if (!a_vector) s.out.push_back(s.m);
  if (!b_vector) s.out.push_back(s.n);
  return s;
}

}  // namespace zerograph
