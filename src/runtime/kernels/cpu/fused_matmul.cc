// ONNX Runtime's FusedMatMul on the CPU: Y = alpha · A'·B' (fused_matmul_shapes.h), each operand
// read in place by BLAS with its leading dimension and batch stride, one GEMM per output matrix
// of the broadcast batch walk. fp16 and bf16 multiply in fp32 copies.

#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/blas.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/widened.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/matmul_shapes.h"
#include "zerograph/ir/fused_matmul_shapes.h"

namespace zerograph::runtime {
namespace {

// The product in BLAS's type C over operands already in it.
template <typename C>
void Multiply(const Blas& blas, const FusedMatMulShapes& s, double alpha, const C* a, const C* b,
              C* y) {
  const int64_t y_matrix = s.m * s.n;
  const std::array<std::span<const int64_t>, 2> batches = {s.a.batch, s.b.batch};
  const BroadcastPlan plan = PlanBroadcast(s.out_batch, batches);
  const int64_t sa = plan.strides[0].back();
  const int64_t sb = plan.strides[1].back();
  int64_t out_index = 0;
  ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
    for (int64_t i = 0; i < count; ++i, ++out_index) {
      blas.Gemm(s.a.trans, s.b.trans, s.m, s.n, s.k, static_cast<C>(alpha),
                a + (offsets[0] + i * sa) * s.a.batch_stride, s.a.ld,
                b + (offsets[1] + i * sb) * s.b.batch_stride, s.b.ld, C(0),
                y + out_index * y_matrix, s.n);
    }
  });
}

template <typename T>
class FusedMatMulKernel final : public FusedMatMulKernelBase {
 public:
  using FusedMatMulKernelBase::FusedMatMulKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<FusedMatMulKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(FusedMatMulShapes s,
                        FusedMatMulShapesOf(a.shape(), b.shape(), attrs_.options));
    if (y.numel() == 0) return Status::Ok();
    if (s.k == 0) {  // an empty sum
      std::memset(y.data(), 0, y.byte_size());
      return Status::Ok();
    }
    ZG_ASSIGN_OR_RETURN(const Blas* blas, Blas::Get());
    if constexpr (kIsNarrowFloat<T>) {
      const std::vector<float> wa = Widened<T>(a), wb = Widened<T>(b);
      std::vector<float> wy(static_cast<size_t>(y.numel()));
      Multiply<float>(*blas, s, attrs_.alpha, wa.data(), wb.data(), wy.data());
      StoreNarrowed<T>(wy, y);
    } else {
      Multiply<T>(*blas, s, attrs_.alpha, a.data_as<const T>(), b.data_as<const T>(),
                  y.data_as<T>());
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuFusedMatMulKernels(KernelRegistry& registry) {
  return registry.Register({"com.microsoft",
                            "FusedMatMul",
                            DeviceType::kCpu,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            TypedFactory<FusedMatMulKernel, FloatDtypes>::Create});
}

}  // namespace zerograph::runtime
