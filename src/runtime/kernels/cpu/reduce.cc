// ReduceSum and ReduceMean with ONNX semantics across opsets: axes from the `axes` attribute
// (ReduceSum < 13, ReduceMean < 18) or the optional second input (ReduceSum >= 13, ReduceMean >=
// 18, read on the host at planning time), `keepdims` (default 1), and `noop_with_empty_axes`
// (default 0: no axes reduces everything; 1: no axes is the identity). fp32 sums accumulate in
// double, so results do not depend on the order the elements are visited in.

#include <array>
#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/reduce_shapes.h"

namespace zerograph::runtime {
namespace {

template <typename T, bool kMean>
class ReduceKernel final : public ReduceKernelBase {
 public:
  using ReduceKernelBase::ReduceKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<ReduceKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (y.numel() == x.numel() && y.shape() == x.shape()) {  // nothing reduced
      CopyUnlessSame(x, y);
      return Status::Ok();
    }
    // The output with reduced axes kept as 1, broadcast over the input: each run of the input
    // adds into the output with stride 0 (reduced axis innermost) or 1.
    ZG_ASSIGN_OR_RETURN(const Shape kept, KeptShape(ctx));
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    std::vector<Acc> acc(static_cast<size_t>(y.numel()), Acc(0));
    const T* px = x.data_as<const T>();
    const std::array<std::span<const int64_t>, 1> inputs = {kept};
    const BroadcastPlan plan = PlanBroadcast(x.shape(), inputs);
    const int64_t stride = plan.strides[0].back();
    int64_t in_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      const T* src = px + in_offset;
      Acc* dst = acc.data() + offsets[0];
      if (stride == 0) {
        Acc sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += static_cast<Acc>(Load(src[i]));
        *dst += sum;
      } else {
        for (int64_t i = 0; i < n; ++i) dst[i] += static_cast<Acc>(Load(src[i]));
      }
      in_offset += n;
    });
    T* py = y.data_as<T>();
    const Acc count = static_cast<Acc>(y.numel() == 0 ? 0 : x.numel() / y.numel());
    for (size_t i = 0; i < acc.size(); ++i) {
      const Acc v = kMean ? acc[i] / count : acc[i];
      py[i] = Store<T>(static_cast<ArithType<T>>(v));
    }
    return Status::Ok();
  }
};

template <typename T>
using ReduceSumKernel = ReduceKernel<T, false>;
template <typename T>
using ReduceMeanKernel = ReduceKernel<T, true>;

}  // namespace

Status RegisterCpuReduceKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "ReduceSum",
                                        kCpu,
                                        NumericDtypes::Vector(),
                                        0,
                                        {},
                                        TypedFactory<ReduceSumKernel, NumericDtypes>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "ReduceMean",
                                        kCpu,
                                        FloatDtypes::Vector(),
                                        0,
                                        {},
                                        TypedFactory<ReduceMeanKernel, FloatDtypes>::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
