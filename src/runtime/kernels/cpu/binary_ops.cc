// Element-wise ops of two inputs with ONNX multidirectional broadcasting: Add, Sub, Mul, Div,
// Greater; and org.zerograph ReluGrad(dY, X) = dY where X > 0, else 0 (same shapes).

#include <array>
#include <memory>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

struct AddOp {
  template <typename A>
  static A Apply(A a, A b) {
    return a + b;
  }
};
struct SubOp {
  template <typename A>
  static A Apply(A a, A b) {
    return a - b;
  }
};
struct MulOp {
  template <typename A>
  static A Apply(A a, A b) {
    return a * b;
  }
};
struct DivOp {
  template <typename A>
  static A Apply(A a, A b) {
    return a / b;
  }
};
struct GreaterOp {
  template <typename A>
  static bool Apply(A a, A b) {
    return a > b;
  }
};
// Inputs (dY, X).
struct ReluGradOp {
  template <typename A>
  static A Apply(A dy, A x) {
    return x > A(0) ? dy : A(0);
  }
};

// out[i] = Op(a[i·sa], b[i·sb]) for i < n; strides are 0 or 1, so each case is its own loop the
// compiler vectorizes.
template <typename Op, typename T, typename Out>
void Run(const T* a, int64_t sa, const T* b, int64_t sb, Out* out, int64_t n) {
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

template <typename Op, typename T, typename Out, bool kSameShapeOnly>
class BinaryKernel final : public BinaryKernelBase {
 public:
  explicit BinaryKernel(const KernelInfo& info)
      : BinaryKernelBase(info, std::is_same_v<Out, bool>, kSameShapeOnly) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& out = *ctx.outputs[0];
    const T* pa = a.data_as<const T>();
    const T* pb = b.data_as<const T>();
    Out* po = out.data_as<Out>();
    if (a.shape() == b.shape()) {  // the common case: no index arithmetic
      Run<Op>(pa, 1, pb, 1, po, out.numel());
      return Status::Ok();
    }
    const std::array<std::span<const int64_t>, 2> inputs = {a.shape(), b.shape()};
    const BroadcastPlan plan = PlanBroadcast(out.shape(), inputs);
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    int64_t out_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      Run<Op>(pa + offsets[0], sa, pb + offsets[1], sb, po + out_offset, n);
      out_offset += n;
    });
    return Status::Ok();
  }
};

template <typename Op, bool kBoolOutput = false, bool kSameShapeOnly = false>
struct Binary {
  template <typename T>
  using Kernel = BinaryKernel<Op, T, std::conditional_t<kBoolOutput, bool, T>, kSameShapeOnly>;
  template <typename T>
  struct Factory {
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernel<Kernel<T>>(info);
    }
  };
};

}  // namespace

Status RegisterCpuBinaryKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Add",
                                        kCpu,
                                        {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64},
                                        0,
                                        {},
                                        MakeTypedKernel<Binary<AddOp>::Factory, kFloat32, kFloat64,
                                                        kFloat16, kBFloat16, kInt32, kInt64>}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Sub",
                                        kCpu,
                                        {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64},
                                        0,
                                        {},
                                        MakeTypedKernel<Binary<SubOp>::Factory, kFloat32, kFloat64,
                                                        kFloat16, kBFloat16, kInt32, kInt64>}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Mul",
                                        kCpu,
                                        {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64},
                                        0,
                                        {},
                                        MakeTypedKernel<Binary<MulOp>::Factory, kFloat32, kFloat64,
                                                        kFloat16, kBFloat16, kInt32, kInt64>}));
  // Integer Div is not registered: C++ truncates negative quotients where numpy floors.
  ZG_RETURN_IF_ERROR(registry.Register(
      {"",
       "Div",
       kCpu,
       {kFloat32, kFloat64, kFloat16, kBFloat16},
       0,
       {},
       MakeTypedKernel<Binary<DivOp>::Factory, kFloat32, kFloat64, kFloat16, kBFloat16>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"",
                         "Greater",
                         kCpu,
                         {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64},
                         0,
                         {},
                         MakeTypedKernel<Binary<GreaterOp, /*kBoolOutput=*/true>::Factory, kFloat32,
                                         kFloat64, kFloat16, kBFloat16, kInt32, kInt64>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {std::string(kZerographDomain),
       "ReluGrad",
       kCpu,
       {kFloat32, kFloat16, kBFloat16},
       0,
       {},
       MakeTypedKernel<Binary<ReluGradOp, false, /*kSameShapeOnly=*/true>::Factory, kFloat32,
                       kFloat16, kBFloat16>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
