#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_MATMUL_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_MATMUL_SHAPES_H_

// Shape inference of MatMul (numpy matmul: 1-D operands promoted, batch dimensions broadcast) and
// Gemm (Y = alpha·A'·B' + beta·C, C broadcast to [M, N]), shared by every device: a backend
// derives its kernel from these bases and implements only ComputeImpl.

#include <climits>
#include <initializer_list>
#include <vector>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// BLAS and cuBLAS take int dimensions.
inline Status CheckBlasDims(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) {
    ZG_RETURN_IF_NOT(d <= INT_MAX, "dimension ", d, " exceeds BLAS's int range");
  }
  return Status::Ok();
}

// The shapes of a MatMul with 1-D operands promoted: a [..., M, K], b [..., K, N].
struct MatMulShapes {
  Shape a_batch, b_batch, out_batch;
  int64_t m = 1, k = 1, n = 1;
  Shape out;
};

inline StatusOr<MatMulShapes> MatMulShapesOf(const Shape& a, const Shape& b) {
  ZG_RETURN_IF_NOT(!a.empty() && !b.empty(), "MatMul of a scalar: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  MatMulShapes s;
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  s.m = a_vector ? 1 : a[a.size() - 2];
  s.k = a.back();
  const int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  s.n = b_vector ? 1 : b.back();
  ZG_RETURN_IF_NOT(s.k == kb, "MatMul inner dimensions differ: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  if (!a_vector) s.a_batch.assign(a.begin(), a.end() - 2);
  if (!b_vector) s.b_batch.assign(b.begin(), b.end() - 2);
  ZG_ASSIGN_OR_RETURN(s.out_batch, BroadcastShapes(s.a_batch, s.b_batch));
  s.out = s.out_batch;
  if (!a_vector) s.out.push_back(s.m);
  if (!b_vector) s.out.push_back(s.n);
  return s;
}

class MatMulKernelBase : public OpKernel {
 public:
  explicit MatMulKernelBase(const KernelInfo& info) : OpKernel(info) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 2, "expects 2 inputs, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* a, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(const TensorSpec* b, RequiredInput(ctx, 1));
    ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
    ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(a->shape, b->shape));
    ZG_RETURN_IF_ERROR(CheckBlasDims({s.m, s.n, s.k}));
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{a->dtype, s.out}}};
  }
};

// Gemm's attributes.
struct GemmAttrs {
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1;
  float beta = 1;
};

class GemmKernelBase : public OpKernel {
 public:
  static StatusOr<GemmAttrs> ParseAttrs(const KernelInfo& info) {
    GemmAttrs attrs;
    ZG_ASSIGN_OR_RETURN(int64_t trans_a, IntAttr(*info.node, "transA", 0));
    ZG_ASSIGN_OR_RETURN(int64_t trans_b, IntAttr(*info.node, "transB", 0));
    ZG_ASSIGN_OR_RETURN(attrs.alpha, FloatAttr(*info.node, "alpha", 1.0f));
    ZG_ASSIGN_OR_RETURN(attrs.beta, FloatAttr(*info.node, "beta", 1.0f));
    attrs.trans_a = trans_a != 0;
    attrs.trans_b = trans_b != 0;
    return attrs;
  }
  GemmKernelBase(const KernelInfo& info, GemmAttrs attrs) : OpKernel(info), attrs_(attrs) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 2 || ctx.num_inputs() == 3, "expects 2 or 3 inputs, got ",
                     ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* a, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(const TensorSpec* b, RequiredInput(ctx, 1));
    ZG_RETURN_IF_NOT(a->shape.size() == 2 && b->shape.size() == 2, "A and B must be 2-D, got ",
                     ShapeToString(a->shape), " and ", ShapeToString(b->shape));
    ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
    const int64_t m = attrs_.trans_a ? a->shape[1] : a->shape[0];
    const int64_t k = attrs_.trans_a ? a->shape[0] : a->shape[1];
    const int64_t kb = attrs_.trans_b ? b->shape[1] : b->shape[0];
    const int64_t n = attrs_.trans_b ? b->shape[0] : b->shape[1];
    ZG_RETURN_IF_NOT(k == kb, "inner dimensions differ: A' is [", m, ",", k, "], B' is [", kb, ",",
                     n, "]");
    ZG_RETURN_IF_ERROR(CheckBlasDims({m, n, k}));
    const Shape out = {m, n};
    if (const TensorSpec* c = ctx.input(2)) {
      ZG_RETURN_IF_NOT(c->dtype == a->dtype, "C has another dtype");
      StatusOr<Shape> broadcast = BroadcastShapes(c->shape, out);
      ZG_RETURN_IF_NOT(broadcast.ok() && *broadcast == out, "C ", ShapeToString(c->shape),
                       " does not broadcast to [", m, ",", n, "]");
    }
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{a->dtype, out}}};
  }

  const GemmAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_MATMUL_SHAPES_H_
