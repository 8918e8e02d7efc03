// MatMul and Gemm on CUDA through cuBLAS, for the CPU's dtypes (cublas_gemm.h: fp32 with fp32
// compute, never TF32, fp64, fp16 and bf16 with fp32 compute), shapes from the shared bases. cuBLAS
// is column-major: a row-major [M, N] product C = A·B is the column-major Cᵀ = Bᵀ·Aᵀ, so every call
// passes B before A and N before M.

#include <cublas_v2.h>

#include <array>
#include <memory>
#include <span>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cublas_gemm.h"
#include "runtime/kernels/cuda/cublas_handles.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/matmul_shapes.h"

namespace zerograph::runtime {
namespace {

class CudaMatMulKernel final : public MatMulKernelBase {
 public:
  using MatMulKernelBase::MatMulKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(a.shape(), b.shape()));
    if (y.numel() == 0) return Status::Ok();
    if (s.k == 0) return CudaMemory::Zero(y.data(), y.byte_size(), ctx);  // an empty sum
    ZG_ASSIGN_OR_RETURN(cublasHandle_t handle, CublasHandleFor(*ctx.stream));
    const size_t size = y.element_size();
    const auto* pa = static_cast<const std::byte*>(a.data());
    const auto* pb = static_cast<const std::byte*>(b.data());
    auto* py = static_cast<std::byte*>(y.data());
    const int64_t a_matrix = s.m * s.k;
    const int64_t b_matrix = s.k * s.n;
    const int64_t y_matrix = s.m * s.n;
    // Yᵀ[n, rows] = Bᵀ[n, k] · Aᵀ[k, rows].
    GemmCall g;
    g.m = s.n;
    g.k = s.k;
    g.lda = s.n;
    g.ldb = s.k;
    g.ldc = s.n;
    // One B for every batch and A's batches laid out as the output's: one GEMM of all rows.
    if (NumElements(s.b_batch) == 1 && s.a_batch == s.out_batch) {
      g.n = NumElements(s.out_batch) * s.m;
      g.a = pb;
      g.b = pa;
      g.c = py;
      return RunGemm(handle, dtype(), 1.0, 0.0, g);
    }
    // Else each run of the broadcast batch walk is one strided batched GEMM.
    g.n = s.m;
    g.stride_c = y_matrix;
    const std::array<std::span<const int64_t>, 2> batches = {s.a_batch, s.b_batch};
    const BroadcastPlan plan = PlanBroadcast(s.out_batch, batches);
    g.stride_a = plan.strides[1].back() * b_matrix;
    g.stride_b = plan.strides[0].back() * a_matrix;
    int64_t out_index = 0;
    Status status;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
      if (!status.ok()) return;
      GemmCall run = g;
      run.a = pb + static_cast<size_t>(offsets[1] * b_matrix) * size;
      run.b = pa + static_cast<size_t>(offsets[0] * a_matrix) * size;
      run.c = py + static_cast<size_t>(out_index * y_matrix) * size;
      run.batch = count;
      status = RunGemm(handle, dtype(), 1.0, 0.0, run);
      out_index += count;
    });
    return status;
  }
};

class CudaGemmKernel final : public GemmKernelBase {
 public:
  using GemmKernelBase::GemmKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    const DeviceTensor* c = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
    DeviceTensor& y = *ctx.outputs[0];
    const int64_t m = y.dim(0);
    const int64_t n = y.dim(1);
    const int64_t k = attrs_.trans_a ? a.dim(0) : a.dim(1);
    if (y.numel() == 0) return Status::Ok();
    // Y = beta·C first (broadcast), then the product is added with cuBLAS beta = 1, as the CPU
    // does; without C the product is written with beta = 0.
    if (c != nullptr) {
      const std::array<std::span<const int64_t>, 1> inputs = {c->shape()};
      ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer index,
                          MakeStridedIndexer(PlanBroadcast(y.shape(), inputs)));
      ZG_RETURN_IF_ERROR(
          CudaLaunchStatus(cuda::LaunchScaledGather(dtype(), attrs_.beta, c->data(), y.data(),
                                                    y.numel(), index, NativeStream(ctx)),
                           "Gemm's beta·C kernel"));
    } else if (k == 0) {
      return CudaMemory::Zero(y.data(), y.byte_size(), ctx);
    }
    if (k == 0) return Status::Ok();
    ZG_ASSIGN_OR_RETURN(cublasHandle_t handle, CublasHandleFor(*ctx.stream));
    // Yᵀ[n, m] = op(B)ᵀ · op(A)ᵀ; a row-major matrix is its column-major transpose, so the
    // operations stay as given and the leading dimensions are the stored row lengths.
    GemmCall g;
    g.trans_a = attrs_.trans_b;
    g.trans_b = attrs_.trans_a;
    g.m = n;
    g.n = m;
    g.k = k;
    g.a = b.data();
    g.lda = b.dim(1);
    g.b = a.data();
    g.ldb = a.dim(1);
    g.c = y.data();
    g.ldc = n;
    return RunGemm(handle, dtype(), attrs_.alpha, c != nullptr ? 1.0 : 0.0, g);
  }
};

}  // namespace

Status RegisterCudaMatMulKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "MatMul", kCuda, FloatDtypes::Vector(), 0, {}, MakeKernel<CudaMatMulKernel>}));
  return registry.Register(
      {"", "Gemm", kCuda, FloatDtypes::Vector(), 0, {}, MakeKernelWithAttrs<CudaGemmKernel>});
}

}  // namespace zerograph::runtime
