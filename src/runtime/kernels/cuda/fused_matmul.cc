// ONNX Runtime's FusedMatMul on CUDA through cuBLAS, for the CPU's dtypes: each operand read in
// place with its leading dimension and batch stride (fused_matmul_shapes.h), each run of the
// broadcast batch walk one strided batched GEMM. Column-major, as in matmul.cc: Yᵀ = B'ᵀ·A'ᵀ, so
// B is passed first and the transposes stay as given.

#include <array>
#include <memory>
#include <span>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cublas_gemm.h"
#include "runtime/kernels/cuda/cublas_handles.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/matmul_shapes.h"
#include "zerograph/ir/fused_matmul_shapes.h"

namespace zerograph::runtime {
namespace {

class CudaFusedMatMulKernel final : public FusedMatMulKernelBase {
 public:
  using FusedMatMulKernelBase::FusedMatMulKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<CudaFusedMatMulKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(FusedMatMulShapes s,
                        FusedMatMulShapesOf(a.shape(), b.shape(), attrs_.options));
    if (y.numel() == 0) return Status::Ok();
    if (s.k == 0) return CudaMemory::Zero(y.data(), y.byte_size(), ctx);  // an empty sum
    ZG_ASSIGN_OR_RETURN(cublasHandle_t handle, CublasHandleFor(*ctx.stream));
    const size_t size = y.element_size();
    const auto* pa = static_cast<const std::byte*>(a.data());
    const auto* pb = static_cast<const std::byte*>(b.data());
    auto* py = static_cast<std::byte*>(y.data());
    GemmCall g;
    g.trans_a = s.b.trans;
    g.trans_b = s.a.trans;
    g.m = s.n;
    g.n = s.m;
    g.k = s.k;
    g.lda = s.b.ld;
    g.ldb = s.a.ld;
    g.ldc = s.n;
    g.stride_c = s.m * s.n;
    const std::array<std::span<const int64_t>, 2> batches = {s.a.batch, s.b.batch};
    const BroadcastPlan plan = PlanBroadcast(s.out_batch, batches);
    g.stride_a = plan.strides[1].back() * s.b.batch_stride;
    g.stride_b = plan.strides[0].back() * s.a.batch_stride;
    int64_t out_index = 0;
    Status status;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
      if (!status.ok()) return;
      GemmCall run = g;
      run.a = pb + static_cast<size_t>(offsets[1] * s.b.batch_stride) * size;
      run.b = pa + static_cast<size_t>(offsets[0] * s.a.batch_stride) * size;
      run.c = py + static_cast<size_t>(out_index * g.stride_c) * size;
      run.batch = count;
      status = RunGemm(handle, dtype(), attrs_.alpha, 0.0, run);
      out_index += count;
    });
    return status;
  }
};

}  // namespace

Status RegisterCudaFusedMatMulKernels(KernelRegistry& registry) {
  return registry.Register({"com.microsoft",
                            "FusedMatMul",
                            DeviceType::kCuda,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            CudaFusedMatMulKernel::Create});
}

}  // namespace zerograph::runtime
