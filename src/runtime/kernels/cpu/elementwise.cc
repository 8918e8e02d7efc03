// The element-wise ops on the CPU: one loop per arity over the shared functors of
// elementwise_ops.h, registered from its tables. Binary ops broadcast as ONNX does (numpy).

#include <array>
#include <memory>
#include <type_traits>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

using elementwise::OpList;

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

// out[i] = Op(a[i·sa], b[i·sb]) for i < n; strides are 0 or 1, so each case is its own loop the
// compiler vectorizes.
template <typename Op, typename T, typename Out>
void RunBinary(const T* a, int64_t sa, const T* b, int64_t sb, Out* out, int64_t n) {
  using A = ArithType<T>;
  auto store = [](auto v) {
    if constexpr (std::is_same_v<Out, bool>) {
      return static_cast<bool>(v);
    } else {
      return Store<T>(v);
    }
  };
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = store(Op::Apply(Load(a[i]), Load(b[i])));
  } else if (sa == 1) {
    const A vb = Load(b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = store(Op::Apply(Load(a[i]), vb));
  } else if (sb == 1) {
    const A va = Load(a[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = store(Op::Apply(va, Load(b[i])));
  } else {
    const auto v = store(Op::Apply(Load(a[0]), Load(b[0])));
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

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
    const T* pa = a.data_as<const T>();
    const T* pb = b.data_as<const T>();
    Out* po = out.data_as<Out>();
    if (a.shape() == b.shape()) {  // the common case: no index arithmetic
      RunBinary<Op>(pa, 1, pb, 1, po, out.numel());
      return Status::Ok();
    }
    const std::array<std::span<const int64_t>, 2> inputs = {a.shape(), b.shape()};
    const BroadcastPlan plan = PlanBroadcast(out.shape(), inputs);
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    int64_t out_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      RunBinary<Op>(pa + offsets[0], sa, pb + offsets[1], sb, po + out_offset, n);
      out_offset += n;
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
