// Matrix products through BLAS: ONNX MatMul (numpy matmul: 1-D operands promoted, batch
// dimensions broadcast) and Gemm (Y = alpha·A'·B' + beta·C, C broadcast to [M, N]). fp16 and bf16
// multiply in fp32 copies (widened.h). OpenBLAS has no strided batched GEMM: a broadcast batch is
// one GEMM per output matrix, and a batch that shares B is one GEMM of all its rows.

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/blas.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/widened.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/matmul_shapes.h"

namespace zerograph::runtime {
namespace {

// numpy matmul of operands already in BLAS's type C.
template <typename C>
void MatMulProduct(const Blas& blas, const MatMulShapes& s, const C* pa, const C* pb, C* py) {
  const int64_t a_matrix = s.m * s.k;
  const int64_t b_matrix = s.k * s.n;
  const int64_t y_matrix = s.m * s.n;
  // One B for every batch and A's batches laid out as the output's: one GEMM of all rows.
  if (NumElements(s.b_batch) == 1 && s.a_batch == s.out_batch) {
    blas.Gemm(false, false, NumElements(s.out_batch) * s.m, s.n, s.k, C(1), pa, s.k, pb, s.n, C(0),
              py, s.n);
    return;
  }
  const std::array<std::span<const int64_t>, 2> batches = {s.a_batch, s.b_batch};
  const BroadcastPlan plan = PlanBroadcast(s.out_batch, batches);
  const int64_t sa = plan.strides[0].back();
  const int64_t sb = plan.strides[1].back();
  int64_t out_index = 0;
  ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
    for (int64_t i = 0; i < count; ++i, ++out_index) {
      blas.Gemm(false, false, s.m, s.n, s.k, C(1), pa + (offsets[0] + i * sa) * a_matrix, s.k,
                pb + (offsets[1] + i * sb) * b_matrix, s.n, C(0), py + out_index * y_matrix, s.n);
    }
  });
}

template <typename T>
class MatMulKernel final : public MatMulKernelBase {
 public:
  using MatMulKernelBase::MatMulKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<MatMulKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(a.shape(), b.shape()));
    if (y.numel() == 0) return Status::Ok();
    if (s.k == 0) {  // an empty sum
      std::memset(y.data(), 0, y.byte_size());
      return Status::Ok();
    }
    ZG_ASSIGN_OR_RETURN(const Blas* blas, Blas::Get());
    if constexpr (kIsNarrowFloat<T>) {
      const std::vector<float> wa = Widened<T>(a), wb = Widened<T>(b);
      std::vector<float> wy(static_cast<size_t>(y.numel()));
      MatMulProduct<float>(*blas, s, wa.data(), wb.data(), wy.data());
      StoreNarrowed<T>(wy, y);
    } else {
      MatMulProduct<T>(*blas, s, a.data_as<const T>(), b.data_as<const T>(), y.data_as<T>());
    }
    return Status::Ok();
  }
};

// Y[m, n] = alpha·A'·B' + beta·C (C broadcast; null: none) in BLAS's type T.
template <typename T>
void GemmProduct(const Blas& blas, const GemmAttrs& attrs, const T* pa, int64_t lda, const T* pb,
                 int64_t ldb, const T* pc, std::span<const int64_t> c_shape,
                 std::span<const int64_t> y_shape, int64_t k, T* py) {
  const int64_t m = y_shape[0], n = y_shape[1];
  // Y = beta·C first (broadcast), then the product is added with BLAS beta = 1.
  if (pc != nullptr) {
    const T beta = static_cast<T>(attrs.beta);
    const std::array<std::span<const int64_t>, 1> inputs = {c_shape};
    const BroadcastPlan plan = PlanBroadcast(y_shape, inputs);
    const int64_t sc = plan.strides[0].back();
    int64_t out_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
      const T* src = pc + offsets[0];
      T* dst = py + out_offset;
      for (int64_t i = 0; i < count; ++i) dst[i] = beta * src[i * sc];
      out_offset += count;
    });
  } else {
    std::fill_n(py, m * n, T(0));
  }
  if (k == 0) return;
  blas.Gemm(attrs.trans_a, attrs.trans_b, m, n, k, static_cast<T>(attrs.alpha), pa, lda, pb, ldb,
            T(1), py, n);
}

template <typename T>
class GemmKernel final : public GemmKernelBase {
 public:
  using GemmKernelBase::GemmKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<GemmKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    const DeviceTensor* c = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
    DeviceTensor& y = *ctx.outputs[0];
    const int64_t k = attrs_.trans_a ? a.dim(0) : a.dim(1);
    if (y.numel() == 0) return Status::Ok();
    const Shape c_shape = c != nullptr ? c->shape() : Shape{};
    ZG_ASSIGN_OR_RETURN(const Blas* blas, Blas::Get());
    if constexpr (kIsNarrowFloat<T>) {
      const std::vector<float> wa = Widened<T>(a), wb = Widened<T>(b);
      const std::vector<float> wc = c != nullptr ? Widened<T>(*c) : std::vector<float>{};
      std::vector<float> wy(static_cast<size_t>(y.numel()));
      GemmProduct<float>(*blas, attrs_, wa.data(), a.dim(1), wb.data(), b.dim(1),
                         c != nullptr ? wc.data() : nullptr, c_shape, y.shape(), k, wy.data());
      StoreNarrowed<T>(wy, y);
    } else {
      GemmProduct<T>(*blas, attrs_, a.data_as<const T>(), a.dim(1), b.data_as<const T>(), b.dim(1),
                     c != nullptr ? c->data_as<const T>() : nullptr, c_shape, y.shape(), k,
                     y.data_as<T>());
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuMatMulKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "MatMul",
                                        kCpu,
                                        FloatDtypes::Vector(),
                                        0,
                                        {},
                                        TypedFactory<MatMulKernel, FloatDtypes>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Gemm",
                                        kCpu,
                                        FloatDtypes::Vector(),
                                        0,
                                        {},
                                        TypedFactory<GemmKernel, FloatDtypes>::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
