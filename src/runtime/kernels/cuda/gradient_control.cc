// org.zerograph SumOfSquares and GradientControl on CUDA (gradient_control.cu). SumOfSquares sums
// through a small device workspace the kernel allocates on its first run and keeps: a node runs
// on one stream, one step after another.

#include <memory>
#include <mutex>

#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/gradient_control_launch.h"
#include "runtime/kernels/gradient_control_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/runtime/buffer.h"

namespace zerograph::runtime {
namespace {

class CudaSumOfSquaresKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    std::call_once(workspace_once_, [&] {
      workspace_ = ctx.stream->device().Allocate(
          static_cast<size_t>(cuda::kSumOfSquaresWorkspaceDoubles) * sizeof(double));
    });
    ZG_RETURN_IF_ERROR(workspace_.status());
    double* workspace = static_cast<double*>((*workspace_)->data());
    float* sum = ctx.outputs[0]->data_as<float>();
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const DeviceTensor& x = *ctx.inputs[i];
      const bool last = i + 1 == ctx.inputs.size();
      ZG_RETURN_IF_ERROR(CudaLaunchStatus(
          cuda::LaunchSumOfSquares(x.dtype(), x.data(), x.numel(), i == 0, last ? sum : nullptr,
                                   workspace, NativeStream(ctx)),
          "SumOfSquares kernel"));
    }
    return Status::Ok();
  }

 private:
  mutable std::once_flag workspace_once_;
  mutable StatusOr<std::shared_ptr<Buffer>> workspace_ = std::shared_ptr<Buffer>();
};

class CudaGradientControlKernel final : public GradientControlKernelBase {
 public:
  using GradientControlKernelBase::GradientControlKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    auto in = [&](size_t i) {
      return scaled_ || i == 0 ? ctx.inputs[i]->data_as<const float>() : nullptr;
    };
    auto out = [&](size_t i) {
      return scaled_ || i == 0 ? ctx.outputs[i]->data_as<float>() : nullptr;
    };
    return CudaLaunchStatus(cuda::LaunchGradientControl(attrs_, in(0), in(1), in(2), out(0), out(1),
                                                        out(2), NativeStream(ctx)),
                            "GradientControl kernel");
  }
};

}  // namespace

Status RegisterCudaGradientControlKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  const std::string domain(kZerographDomain);
  // SumOfSquares dispatches on each input's dtype itself; input 0 only selects the kernel.
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "SumOfSquares",
                                        kCuda,
                                        GradientDtypes::Vector(),
                                        0,
                                        {},
                                        MakeKernel<CudaSumOfSquaresKernel>}));
  return registry.Register({domain,
                            "GradientControl",
                            kCuda,
                            {DataType::kFloat32},
                            0,
                            {},
                            MakeKernelWithAttrs<CudaGradientControlKernel>});
}

}  // namespace zerograph::runtime
