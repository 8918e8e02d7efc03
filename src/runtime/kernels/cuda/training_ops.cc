// Dropout, DropoutGrad and InPlaceAccumulatorV2 on CUDA (training_ops.cu), attributes from the
// shared bases, for the CPU's dtypes. Ratio, training_mode and overwrite_flag are read on the host
// when the kernel launches.

#include <memory>

#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/training_ops_launch.h"
#include "runtime/kernels/dropout_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

class CudaDropoutKernel final : public DropoutKernelBase {
 public:
  using DropoutKernelBase::DropoutKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const DropoutRun run, RunOf(ctx));
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    DeviceTensor* mask = ctx.outputs.size() > 1 ? ctx.outputs[1] : nullptr;
    if (!run.training || run.ratio == 0) {
      ZG_RETURN_IF_ERROR(CudaMemory::CopyBytes(x.data(), y.data(), y.byte_size(), ctx));
      if (mask == nullptr) return Status::Ok();
      if (mask->dtype() == DataType::kBool) {
        return CudaLaunchStatus(
            cudaMemsetAsync(mask->data(), 1, mask->byte_size(), NativeStream(ctx)), "mask fill");
      }
      return CudaLaunchStatus(
          cuda::LaunchFillOne(mask->dtype(), mask->data(), mask->numel(), NativeStream(ctx)),
          "mask fill");
    }
    return CudaLaunchStatus(cuda::LaunchDropout(dtype(), x.data(), y.data(),
                                                mask != nullptr ? mask->data_as<bool>() : nullptr,
                                                x.numel(), KeyOf(ctx), DropoutThreshold(run.ratio),
                                                1.0 / (1.0 - run.ratio), NativeStream(ctx)),
                            "dropout kernel");
  }
};

class CudaDropoutGradKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const DropoutRun run, ReadDropoutRun(ctx, 2, DropoutRun{true, 0.5}));
    const DeviceTensor& dy = *ctx.inputs[0];
    DeviceTensor& dx = *ctx.outputs[0];
    if (!run.training) return CudaMemory::CopyBytes(dy.data(), dx.data(), dx.byte_size(), ctx);
    return CudaLaunchStatus(
        cuda::LaunchDropoutGrad(dtype(), dy.data(), ctx.inputs[1]->data_as<const bool>(), dx.data(),
                                dy.numel(), 1.0 / (1.0 - run.ratio), NativeStream(ctx)),
        "dropout gradient kernel");
  }
};

// Without the buffer output the buffer input is updated, as ONNX Runtime's graphs expect.
class CudaAccumulatorKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    if (outputs.size() > 1) outputs[1].in_place_input = 0;
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& buffer = *ctx.inputs[0];
    const DeviceTensor& value = *ctx.inputs[1];
    bool overwrite = false;
    if (ctx.inputs.size() > 2 && ctx.inputs[2] != nullptr) {
      const DeviceTensor& flag = *ctx.inputs[2];
      ZG_RETURN_IF_NOT(flag.numel() == 1 && flag.device().host_accessible(),
                       "overwrite_flag must be one bool in host memory, got ", flag.ToString());
      overwrite = *flag.data_as<const bool>();
    }
    void* out = ctx.outputs.size() > 1 && ctx.outputs[1] != nullptr ? ctx.outputs[1]->data()
                                                                    : buffer.data();
    ZG_RETURN_IF_ERROR(
        CudaLaunchStatus(cuda::LaunchAccumulate(dtype(), value.dtype(), buffer.data(), value.data(),
                                                out, buffer.numel(), overwrite, NativeStream(ctx)),
                         "accumulator kernel"));
    return CudaLaunchStatus(cudaMemsetAsync(ctx.outputs[0]->data(), 1, 1, NativeStream(ctx)),
                            "updated_flag");
  }
};

}  // namespace

Status RegisterCudaTrainingOpKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Dropout",
                                        kCuda,
                                        FloatDtypes::Vector(),
                                        0,
                                        {1, 2},
                                        MakeKernelWithAttrs<CudaDropoutKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register({"com.microsoft",
                                        "DropoutGrad",
                                        kCuda,
                                        FloatDtypes::Vector(),
                                        0,
                                        {2, 3},
                                        MakeKernel<CudaDropoutGradKernel>}));
  return registry.Register({"com.microsoft",
                            "InPlaceAccumulatorV2",
                            kCuda,
                            FloatDtypes::Vector(),
                            0,
                            {2},
                            MakeKernel<CudaAccumulatorKernel>});
}

}  // namespace zerograph::runtime
