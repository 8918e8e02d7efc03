// The element-wise ops of more than two inputs on the CPU: Max, Min, Sum and Mean fold their
// inputs pairwise into the output (each step a broadcast binary loop), Where picks from X or Y.

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/binary_loop.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/elementwise_attr_ops.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

namespace ew = elementwise;

// out = step(...step(step(in0, in1), in2)..., in_n-1), then ·1/n for Mean. The first step reads
// inputs 0 and 1 only, so the output may take the memory of either (VariadicKernelBase).
template <typename Step, bool kMean, typename T>
class VariadicKernel final : public VariadicKernelBase {
 public:
  using VariadicKernelBase::VariadicKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    DeviceTensor& out = *ctx.outputs[0];
    T* po = out.data_as<T>();
    const auto step = [](auto x, auto y) { return Store<T>(Step::Apply(x, y)); };
    const DeviceTensor& first = *ctx.inputs[0];
    if (ctx.inputs.size() == 1) {
      if (first.data() != out.data()) std::memcpy(po, first.data(), out.byte_size());
    } else {
      const DeviceTensor& second = *ctx.inputs[1];
      BroadcastBinary(first.data_as<const T>(), first.shape(), second.data_as<const T>(),
                      second.shape(), po, out.shape(), step);
    }
    for (size_t i = 2; i < ctx.inputs.size(); ++i) {
      const DeviceTensor& in = *ctx.inputs[i];
      BroadcastBinary(static_cast<const T*>(po), out.shape(), in.data_as<const T>(), in.shape(), po,
                      out.shape(), step);
    }
    if constexpr (kMean) {
      const ArithType<T> scale = ArithType<T>(1) / static_cast<ArithType<T>>(ctx.inputs.size());
      const int64_t n = out.numel();
      for (int64_t i = 0; i < n; ++i) po[i] = Store<T>(Load(po[i]) * scale);
    }
    return Status::Ok();
  }
};

template <typename Step, bool kMean = false>
struct Variadic {
  template <typename T>
  struct Kernel {
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernel<VariadicKernel<Step, kMean, T>>(info);
    }
  };
};

// Where(condition, X, Y) moves elements: one kernel per element size, not per dtype.
template <typename Word>
class WhereKernel final : public WhereKernelBase {
 public:
  using WhereKernelBase::WhereKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& condition = *ctx.inputs[0];
    const DeviceTensor& x = *ctx.inputs[1];
    const DeviceTensor& y = *ctx.inputs[2];
    DeviceTensor& out = *ctx.outputs[0];
    const bool* pc = condition.data_as<const bool>();
    const Word* px = static_cast<const Word*>(x.data());
    const Word* py = static_cast<const Word*>(y.data());
    Word* po = static_cast<Word*>(out.data());
    const std::array<std::span<const int64_t>, 3> inputs = {condition.shape(), x.shape(),
                                                            y.shape()};
    const BroadcastPlan plan = PlanBroadcast(out.shape(), inputs);
    const int64_t sc = plan.strides[0].back();
    const int64_t sx = plan.strides[1].back();
    const int64_t sy = plan.strides[2].back();
    int64_t out_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      const bool* c = pc + offsets[0];
      const Word* a = px + offsets[1];
      const Word* b = py + offsets[2];
      Word* o = po + out_offset;
      if (sc == 1 && sx == 1 && sy == 1) {
        for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? a[i * sx] : b[i * sy];
      }
      out_offset += n;
    });
    return Status::Ok();
  }
};

StatusOr<std::unique_ptr<OpKernel>> CreateWhere(const KernelInfo& info) {
  switch (ElementSize(info.dtype)) {
    case 1:
      return MakeKernel<WhereKernel<uint8_t>>(info);
    case 2:
      return MakeKernel<WhereKernel<uint16_t>>(info);
    case 4:
      return MakeKernel<WhereKernel<uint32_t>>(info);
    case 8:
      return MakeKernel<WhereKernel<uint64_t>>(info);
    default:
      return UnimplementedError(StrCat("Where of ", DataTypeName(info.dtype)));
  }
}

template <typename Family, DataType... Ds>
Status Register(KernelRegistry& registry, std::string op, DtypeList<Ds...>) {
  return registry.Register({"",
                            std::move(op),
                            DeviceType::kCpu,
                            {Ds...},
                            0,
                            {},
                            MakeTypedKernel<Family::template Kernel, Ds...>});
}

}  // namespace

Status RegisterCpuElementwiseNaryKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(Register<Variadic<ew::MaxOf>>(registry, "Max", AllNumericDtypes{}));
  ZG_RETURN_IF_ERROR(Register<Variadic<ew::MinOf>>(registry, "Min", AllNumericDtypes{}));
  ZG_RETURN_IF_ERROR(Register<Variadic<ew::Add>>(registry, "Sum", FloatDtypes{}));
  ZG_RETURN_IF_ERROR((Register<Variadic<ew::Add, true>>(registry, "Mean", FloatDtypes{})));
  return registry.Register(
      {"", "Where", DeviceType::kCpu, AllDtypes::Vector(), 1, {}, &CreateWhere});
}

}  // namespace zerograph::runtime
