// ReduceSum and ReduceMean with ONNX semantics across opsets: axes from the `axes` attribute
// (ReduceSum < 13, ReduceMean < 18) or the optional second input (ReduceSum >= 13, ReduceMean >=
// 18, read on the host at planning time), `keepdims` (default 1), and `noop_with_empty_axes`
// (default 0: no axes reduces everything; 1: no axes is the identity). fp32 sums accumulate in
// double, so results do not depend on the order the elements are visited in.

#include <array>
#include <memory>
#include <vector>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

// Which axes of the input are reduced.
StatusOr<std::vector<bool>> ReducedAxes(const std::vector<int64_t>& axes, int64_t rank,
                                        bool noop_with_empty_axes, bool* identity) {
  *identity = axes.empty() && noop_with_empty_axes;
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop_with_empty_axes);
  for (int64_t axis : axes) {
    ZG_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank));
    ZG_RETURN_IF_NOT(!reduced[static_cast<size_t>(a)], "axis ", axis, " is listed twice");
    reduced[static_cast<size_t>(a)] = true;
  }
  return reduced;
}

template <typename T, bool kMean>
class ReduceKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t keepdims, IntAttr(*info.node, "keepdims", 1));
    ZG_ASSIGN_OR_RETURN(int64_t noop, IntAttr(*info.node, "noop_with_empty_axes", 0));
    std::optional<std::vector<int64_t>> axes;
    if (info.node->HasAttribute("axes")) {
      ZG_ASSIGN_OR_RETURN(axes, IntsAttr(*info.node, "axes"));
    }
    return std::unique_ptr<OpKernel>(new ReduceKernel(info, keepdims != 0, noop != 0, axes));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1 || ctx.num_inputs() == 2, "expects 1 or 2 inputs");
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    std::vector<int64_t> axes = attr_axes_.value_or(std::vector<int64_t>{});
    if (ctx.input(1) != nullptr) {
      ZG_RETURN_IF_NOT(!attr_axes_, "axes given both as attribute and as input");
      const DeviceTensor* value = ctx.value(1);
      ZG_RETURN_IF_NOT(value != nullptr, "the axes input must be a constant");
      ZG_ASSIGN_OR_RETURN(axes, ReadInt64Values(*value, "axes"));
    }
    bool identity;
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    ZG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        ReducedAxes(axes, rank, noop_with_empty_axes_, &identity));
    OutputInfo out{TensorSpec{x->dtype, {}}};
    if (identity) {
      out.spec.shape = x->shape;
      out.view = OutputInfo::View{0, 0};
      return std::vector<OutputInfo>{std::move(out)};
    }
    for (size_t d = 0; d < x->shape.size(); ++d) {
      if (!reduced[d]) {
        out.spec.shape.push_back(x->shape[d]);
      } else if (keepdims_) {
        out.spec.shape.push_back(1);
      }
    }
    return std::vector<OutputInfo>{std::move(out)};
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (y.numel() == x.numel() && y.shape() == x.shape()) {  // nothing reduced
      CopyUnlessSame(x, y);
      return Status::Ok();
    }
    // The output with reduced axes kept as 1, broadcast over the input: each run of the input
    // adds into the output with stride 0 (reduced axis innermost) or 1.
    std::vector<int64_t> axes = attr_axes_.value_or(std::vector<int64_t>{});
    if (ctx.inputs.size() > 1 && ctx.inputs[1] != nullptr) {
      ZG_ASSIGN_OR_RETURN(axes, ReadInt64Values(*ctx.inputs[1], "axes"));
    }
    bool identity;
    ZG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        ReducedAxes(axes, x.rank(), noop_with_empty_axes_, &identity));
    Shape kept = x.shape();
    for (size_t d = 0; d < kept.size(); ++d) {
      if (reduced[d]) kept[d] = 1;
    }
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

 private:
  ReduceKernel(const KernelInfo& info, bool keepdims, bool noop_with_empty_axes,
               std::optional<std::vector<int64_t>> axes)
      : OpKernel(info),
        keepdims_(keepdims),
        noop_with_empty_axes_(noop_with_empty_axes),
        attr_axes_(std::move(axes)) {}

  bool keepdims_;
  bool noop_with_empty_axes_;
  std::optional<std::vector<int64_t>> attr_axes_;
};

template <typename T>
using ReduceSumKernel = ReduceKernel<T, false>;
template <typename T>
using ReduceMeanKernel = ReduceKernel<T, true>;

}  // namespace

Status RegisterCpuReduceKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  ZG_RETURN_IF_ERROR(registry.Register(
      {"",
       "ReduceSum",
       kCpu,
       {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64},
       0,
       {1},
       MakeTypedKernel<ReduceSumKernel, kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"",
       "ReduceMean",
       kCpu,
       {kFloat32, kFloat64, kFloat16, kBFloat16},
       0,
       {1},
       MakeTypedKernel<ReduceMeanKernel, kFloat32, kFloat64, kFloat16, kBFloat16>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
