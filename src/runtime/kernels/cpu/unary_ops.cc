// Element-wise ops of one input: Relu, Neg, Sqrt.

#include <cmath>
#include <memory>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

struct ReluOp {
  template <typename A>
  static A Apply(A x) {
    return x > A(0) ? x : A(0);
  }
};
struct NegOp {
  template <typename A>
  static A Apply(A x) {
    return -x;
  }
};
struct SqrtOp {
  template <typename A>
  static A Apply(A x) {
    return std::sqrt(x);
  }
};

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

template <typename Op>
struct Unary {
  template <typename T>
  using Kernel = UnaryKernel<Op, T>;
};

}  // namespace

Status RegisterCpuUnaryKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  ZG_RETURN_IF_ERROR(registry.Register(
      {"",
       "Relu",
       kCpu,
       {kFloat32, kFloat64, kFloat16, kBFloat16},
       0,
       {},
       MakeTypedKernel<Unary<ReluOp>::Kernel, kFloat32, kFloat64, kFloat16, kBFloat16>}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Neg",
                                        kCpu,
                                        {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64},
                                        0,
                                        {},
                                        MakeTypedKernel<Unary<NegOp>::Kernel, kFloat32, kFloat64,
                                                        kFloat16, kBFloat16, kInt32, kInt64>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"",
       "Sqrt",
       kCpu,
       {kFloat32, kFloat64, kFloat16, kBFloat16},
       0,
       {},
       MakeTypedKernel<Unary<SqrtOp>::Kernel, kFloat32, kFloat64, kFloat16, kBFloat16>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
