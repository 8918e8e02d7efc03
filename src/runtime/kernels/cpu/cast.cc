// Cast(input) to the dtype in attribute `to`, between the floating types (fp32, fp64, fp16, bf16,
// rounding to nearest even), the integers (truncating toward zero, as C++ and numpy do) and bool
// (nonzero is true). Out-of-range floats cast to integers are undefined in ONNX and here.

#include <memory>

#include "runtime/kernels/cast_shapes.h"
#include "runtime/kernels/cpu/avx2_narrow_loops.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

template <typename D, typename S>
D Convert(S value) {
  if constexpr (std::is_same_v<D, S>) {
    return value;
  } else if constexpr (kIsNarrowFloat<S>) {
    return Convert<D>(ToFloat(value));
  } else if constexpr (std::is_same_v<D, bool>) {
    return value != S(0);
  } else if constexpr (kIsNarrowFloat<D>) {
    return FromFloat<D>(static_cast<float>(value));
  } else {
    return static_cast<D>(value);
  }
}

using CastFn = void (*)(const void* in, void* out, int64_t n);

template <typename S, typename D>
void CastLoop(const void* in, void* out, int64_t n) {
  const S* src = static_cast<const S*>(in);
  D* dst = static_cast<D*>(out);
  int64_t first = 0;  // mixed precision's casts take the AVX2 loops where the CPU has them
  if constexpr (std::is_same_v<S, float> && kIsNarrowFloat<D>) {
    first = NarrowAvx2(FormatOf(dst), src, Bits(dst), n);
  } else if constexpr (kIsNarrowFloat<S> && std::is_same_v<D, float>) {
    first = WidenAvx2(FormatOf(src), Bits(src), dst, n);
  }
  for (int64_t i = first; i < n; ++i) dst[i] = Convert<D>(src[i]);
}

class CastKernel final : public CastKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(const DataType target, ParseTarget(info));
    StatusOr<CastFn> fn = DispatchDtypes(CastDtypes{}, info.dtype, [&](auto src) {
      return DispatchDtypes(CastDtypes{}, target, [&](auto dst) -> StatusOr<CastFn> {
        return &CastLoop<decltype(src), decltype(dst)>;
      });
    });
    if (!fn.ok()) {
      return UnimplementedError(StrCat("Cast from ", DataTypeName(info.dtype), " to ",
                                       DataTypeName(target), " is not supported"));
    }
    return std::unique_ptr<OpKernel>(new CastKernel(info, target, *fn));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    if (target_ == ctx.inputs[0]->dtype()) {
      CopyUnlessSame(*ctx.inputs[0], *ctx.outputs[0]);
    } else {
      fn_(ctx.inputs[0]->data(), ctx.outputs[0]->data(), ctx.outputs[0]->numel());
    }
    return Status::Ok();
  }

 private:
  CastKernel(const KernelInfo& info, DataType target, CastFn fn)
      : CastKernelBase(info, target), fn_(fn) {}
  CastFn fn_;
};

// CastLike: Cast to the dtype of input 1, which the kernel learns when it runs.
class CastLikeKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    if (ctx.input(0)->dtype == ctx.input(1)->dtype) outputs[0].view = OutputInfo::View{0, 0};
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    const DataType target = ctx.inputs[1]->dtype();
    if (target == x.dtype()) {
      CopyUnlessSame(x, *ctx.outputs[0]);
      return Status::Ok();
    }
    StatusOr<CastFn> fn = DispatchDtypes(CastDtypes{}, x.dtype(), [&](auto src) {
      return DispatchDtypes(CastDtypes{}, target, [&](auto dst) -> StatusOr<CastFn> {
        return &CastLoop<decltype(src), decltype(dst)>;
      });
    });
    if (!fn.ok()) {
      return UnimplementedError(StrCat("CastLike from ", DataTypeName(x.dtype()), " to ",
                                       DataTypeName(target), " is not supported"));
    }
    (*fn)(x.data(), ctx.outputs[0]->data(), x.numel());
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuCastKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "CastLike", DeviceType::kCpu, CastDtypes::Vector(), 0, {}, MakeKernel<CastLikeKernel>}));
  return registry.Register(
      {"", "Cast", DeviceType::kCpu, CastDtypes::Vector(), 0, {}, &CastKernel::Create});
}

}  // namespace zerograph::runtime
