// Softmax, LogSoftmax, SoftmaxGrad_13 and LogSoftmaxGrad_13 on CUDA (softmax.cu), the axis from
// the shared base, for the CPU's dtypes.

#include <memory>

#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/softmax_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/softmax_shapes.h"

namespace zerograph::runtime {
namespace {

template <cuda::SoftmaxKind kKind>
class CudaSoftmaxKernel final : public SoftmaxKernelBase {
 public:
  using SoftmaxKernelBase::SoftmaxKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(*ctx.inputs[0]));
    const void* b = ctx.inputs.size() > 1 ? ctx.inputs[1]->data() : nullptr;
    return CudaLaunchStatus(
        cuda::LaunchSoftmax(dtype(), kKind, ctx.inputs[0]->data(), b, ctx.outputs[0]->data(),
                            l.outer, l.n, l.inner, NativeStream(ctx)),
        "softmax kernel");
  }
};

template <cuda::SoftmaxKind kKind>
Status Register(KernelRegistry& registry, std::string_view domain, std::string_view name) {
  return registry.Register({std::string(domain),
                            std::string(name),
                            DeviceType::kCuda,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            MakeKernelWithAttrs<CudaSoftmaxKernel<kKind>>});
}

}  // namespace

Status RegisterCudaSoftmaxKernels(KernelRegistry& registry) {
  using cuda::SoftmaxKind;
  ZG_RETURN_IF_ERROR(Register<SoftmaxKind::kSoftmax>(registry, "", "Softmax"));
  ZG_RETURN_IF_ERROR(Register<SoftmaxKind::kLogSoftmax>(registry, "", "LogSoftmax"));
  ZG_RETURN_IF_ERROR(
      Register<SoftmaxKind::kSoftmaxGrad>(registry, "com.microsoft", "SoftmaxGrad_13"));
  return Register<SoftmaxKind::kLogSoftmaxGrad>(registry, "com.microsoft", "LogSoftmaxGrad_13");
}

}  // namespace zerograph::runtime
