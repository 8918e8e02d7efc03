// Dropout (opsets 7, 10, 12, 13) and ONNX Runtime's DropoutGrad on the CPU. In training mode an
// element is kept when its hash of (seed, step, rank, index) clears the ratio (dropout_mask.h),
// and kept values are scaled by 1 / (1 - ratio); otherwise the output is the input and the mask is
// all true.

#include <memory>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/dropout_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

template <typename T>
class DropoutKernel final : public DropoutKernelBase {
 public:
  using DropoutKernelBase::DropoutKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<DropoutKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const DropoutRun run, RunOf(ctx));
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    DeviceTensor* mask = ctx.outputs.size() > 1 ? ctx.outputs[1] : nullptr;
    const int64_t count = x.numel();
    if (!run.training || run.ratio == 0) {
      CopyUnlessSame(x, y);
      if (mask != nullptr) FillKept(*mask, count);
      return Status::Ok();
    }
    const uint64_t key = KeyOf(ctx);
    const uint32_t threshold = DropoutThreshold(run.ratio);
    const auto scale = static_cast<ArithType<T>>(1.0 / (1.0 - run.ratio));
    const T* px = x.data_as<const T>();
    T* py = y.data_as<T>();
    bool* pm = mask != nullptr ? mask->data_as<bool>() : nullptr;
    for (int64_t i = 0; i < count; ++i) {
      const bool keep = DropoutKeeps(key, i, threshold);
      py[i] = keep ? Store<T>(Load(px[i]) * scale) : Store<T>(ArithType<T>(0));
      if (pm != nullptr) pm[i] = keep;
    }
    return Status::Ok();
  }

 private:
  // All kept: true, or 1 in the data's dtype (Dropout-7's mask).
  static void FillKept(DeviceTensor& mask, int64_t count) {
    if (mask.dtype() == DataType::kBool) {
      std::fill_n(mask.data_as<bool>(), count, true);
    } else {
      std::fill_n(mask.data_as<T>(), count, Store<T>(ArithType<T>(1)));
    }
  }
};

// dx = mask ? dy / (1 - ratio) : 0 (ONNX Runtime's function body; ratio 0.5 when absent); a
// training_mode input that is false makes it the identity, as the forward was.
template <typename T>
class DropoutGradKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<DropoutGradKernel>(info);
  }

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const DropoutRun run, ReadDropoutRun(ctx, 2, DropoutRun{true, 0.5}));
    const DeviceTensor& dy = *ctx.inputs[0];
    DeviceTensor& dx = *ctx.outputs[0];
    if (!run.training) {
      CopyUnlessSame(dy, dx);
      return Status::Ok();
    }
    const auto scale = static_cast<ArithType<T>>(1.0 / (1.0 - run.ratio));
    const T* pdy = dy.data_as<const T>();
    const bool* mask = ctx.inputs[1]->data_as<const bool>();
    T* pdx = dx.data_as<T>();
    for (int64_t i = 0; i < dy.numel(); ++i) {
      pdx[i] = mask[i] ? Store<T>(Load(pdy[i]) * scale) : Store<T>(ArithType<T>(0));
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuDropoutKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Dropout",
                                        DeviceType::kCpu,
                                        FloatDtypes::Vector(),
                                        0,
                                        {},
                                        TypedFactory<DropoutKernel, FloatDtypes>::Create}));
  return registry.Register({"com.microsoft",
                            "DropoutGrad",
                            DeviceType::kCpu,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            TypedFactory<DropoutGradKernel, FloatDtypes>::Create});
}

}  // namespace zerograph::runtime
