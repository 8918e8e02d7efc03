#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_MATMUL_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_MATMUL_SHAPES_H_

// The BLAS side of MatMul (numpy matmul: 1-D operands promoted, batch dimensions broadcast) and
// Gemm (Y = alpha·A'·B' + beta·C, C broadcast to [M, N]) and FusedMatMul, shared by every device
// (their shapes are the op contracts'): a backend derives its kernel from these bases and
// implements only ComputeImpl.

#include <climits>
#include <initializer_list>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/fused_matmul_shapes.h"

namespace zerograph::runtime {

// BLAS and cuBLAS take int dimensions.
inline Status CheckBlasDims(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) {
    ZG_RETURN_IF_NOT(d <= INT_MAX, "dimension ", d, " exceeds BLAS's int range");
  }
  return Status::Ok();
}

class MatMulKernelBase : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo>) const override {
    ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(ctx.input(0)->shape, ctx.input(1)->shape));
    return CheckBlasDims({s.m, s.n, s.k});
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
    ZG_ASSIGN_OR_RETURN(int64_t trans_a, ContractInt(*info.node, "transA"));
    ZG_ASSIGN_OR_RETURN(int64_t trans_b, ContractInt(*info.node, "transB"));
    ZG_ASSIGN_OR_RETURN(attrs.alpha, ContractFloat(*info.node, "alpha"));
    ZG_ASSIGN_OR_RETURN(attrs.beta, ContractFloat(*info.node, "beta"));
    attrs.trans_a = trans_a != 0;
    attrs.trans_b = trans_b != 0;
    return attrs;
  }
  GemmKernelBase(const KernelInfo& info, GemmAttrs attrs) : OpKernel(info), attrs_(attrs) {}

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    const int64_t k = ctx.input(0)->shape[attrs_.trans_a ? 0 : 1];
    return CheckBlasDims({outputs[0].spec.shape[0], outputs[0].spec.shape[1], k});
  }

  const GemmAttrs attrs_;
};

// com.microsoft FusedMatMul's attributes (zerograph/ir/fused_matmul_shapes.h).
struct FusedMatMulAttrs {
  FusedMatMulOptions options;
  float alpha = 1;
};

class FusedMatMulKernelBase : public OpKernel {
 public:
  static StatusOr<FusedMatMulAttrs> ParseAttrs(const KernelInfo& info) {
    FusedMatMulAttrs attrs;
    ZG_ASSIGN_OR_RETURN(attrs.options, FusedMatMulOptionsOf(*info.node));
    ZG_ASSIGN_OR_RETURN(attrs.alpha, ContractFloat(*info.node, "alpha"));
    return attrs;
  }
  FusedMatMulKernelBase(const KernelInfo& info, FusedMatMulAttrs attrs)
      : OpKernel(info), attrs_(attrs) {}

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo>) const override {
    ZG_ASSIGN_OR_RETURN(
        FusedMatMulShapes s,
        FusedMatMulShapesOf(ctx.input(0)->shape, ctx.input(1)->shape, attrs_.options));
    return CheckBlasDims({s.m, s.n, s.k, s.a.ld, s.b.ld});
  }

  const FusedMatMulAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_MATMUL_SHAPES_H_
