// The element-wise ops on the CPU: one loop per arity over the shared functors of
// elementwise_ops.h, registered from its tables. Binary ops broadcast as ONNX does (numpy).

#include <algorithm>
#include <memory>
#include <type_traits>

#include "runtime/kernels/cpu/binary_loop.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/vector_math.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

using elementwise::OpList;

// GeluGrad of floats of one shape: dx = dy·GeluMath::ExactDerivative(x), with erf() and exp()
// taken eight at a time (vector_math.h); the scalar ones were most of the op's time.
void GeluGradFloat(const float* dy, const float* x, float* dx, int64_t n) {
  constexpr int64_t kChunk = 512;  // on the stack: dx may be dy or x
  float cdf[kChunk], pdf[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t count = std::min(kChunk, n - start);
    const float* xs = x + start;
    for (int64_t i = 0; i < count; ++i) {
      cdf[i] = xs[i] * 0.70710678118654752440f;
      pdf[i] = -0.5f * xs[i] * xs[i];
    }
    VectorErf(cdf, cdf, count);
    VectorExp(pdf, pdf, count);
    const float* dys = dy + start;
    float* dxs = dx + start;
    for (int64_t i = 0; i < count; ++i) {
      dxs[i] = dys[i] * (0.5f * (1.0f + cdf[i]) + xs[i] * (0.39894228040143267794f * pdf[i]));
    }
  }
}

template <typename Op, typename T>
class UnaryKernel final : public UnaryKernelBase {
 public:
  using UnaryKernelBase::UnaryKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<UnaryKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const T* x = ctx.inputs[0]->data_as<const T>();
    T* y = ctx.outputs[0]->data_as<T>();
    const int64_t n = ctx.outputs[0]->numel();
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) y[i] = Store<T>(Op::Apply(Load(x[i])));
    return Status::Ok();
  }
};

template <typename Op, typename T>
class BinaryKernel final : public BinaryKernelBase {
 public:
  using BinaryKernelBase::BinaryKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<BinaryKernel>(info);
  }

 protected:
  using Out = std::conditional_t<Op::kBoolOutput, bool, T>;

  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& out = *ctx.outputs[0];
    if constexpr (std::is_same_v<Op, elementwise::GeluGrad> && std::is_same_v<T, float>) {
      if (a.shape() == b.shape()) {
        GeluGradFloat(a.data_as<const float>(), b.data_as<const float>(), out.data_as<float>(),
                      out.numel());
        return Status::Ok();
      }
    }
    BroadcastBinary(a.data_as<const T>(), a.shape(), b.data_as<const T>(), b.shape(),
                    out.data_as<Out>(), out.shape(), [](auto x, auto y) -> Out {
                      if constexpr (Op::kBoolOutput) {
                        return Op::Apply(x, y);
                      } else {
                        return Store<T>(Op::Apply(x, y));
                      }
                    });
    return Status::Ok();
  }
};

template <typename Op>
struct Unary {
  template <typename T>
  using Kernel = UnaryKernel<Op, T>;
};
template <typename Op>
struct Binary {
  template <typename T>
  using Kernel = BinaryKernel<Op, T>;
};

// Registers Kernel<Op>'s instantiation for each of Op's dtypes.
template <template <typename> class Kernel, typename Op, DataType... Ds>
Status RegisterOp(KernelRegistry& registry, DtypeList<Ds...>) {
  return registry.Register({std::string(Op::kDomain),
                            std::string(Op::kName),
                            DeviceType::kCpu,
                            {Ds...},
                            0,
                            {},
                            MakeTypedKernel<Kernel, Ds...>});
}

template <template <typename> class Family, typename... Ops>
Status RegisterOps(KernelRegistry& registry, OpList<Ops...>) {
  Status status;
  ((status = status.ok()
                 ? RegisterOp<Family<Ops>::template Kernel, Ops>(registry, typename Ops::Types{})
                 : status),
   ...);
  return status;
}

}  // namespace

Status RegisterCpuElementwiseKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(RegisterOps<Unary>(registry, elementwise::UnaryOps{}));
  return RegisterOps<Binary>(registry, elementwise::BinaryOps{});
}

}  // namespace zerograph::runtime
