// LayerNormalization, SimplifiedLayerNormalization and their gradients on CUDA (layer_norm.cu),
// attributes from the shared base, for the CPU's dtypes. Scale and bias must hold a whole row
// (the CPU also takes ones that broadcast).

#include <memory>

#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/layer_norm_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/layer_norm_shapes.h"

namespace zerograph::runtime {
namespace {

Status CheckWholeRow(const DeviceTensor* param, int64_t n, std::string_view what) {
  if (param == nullptr || param->numel() == n) return Status::Ok();
  return UnimplementedError(StrCat("the CUDA kernel takes a ", what, " of ", n,
                                   " elements, one per normalized element; got ",
                                   ShapeToString(param->shape())));
}

float* OptionalStatistics(const KernelContext& ctx, size_t i) {
  return i < ctx.outputs.size() && ctx.outputs[i] != nullptr ? ctx.outputs[i]->data_as<float>()
                                                             : nullptr;
}

template <bool kRms>
class CudaNormalizationKernel final : public NormalizationKernelBase {
 public:
  using NormalizationKernelBase::NormalizationKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(x));
    const DeviceTensor* bias = !kRms && ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
    ZG_RETURN_IF_ERROR(CheckWholeRow(ctx.inputs[1], l.n, "scale"));
    ZG_RETURN_IF_ERROR(CheckWholeRow(bias, l.n, "bias"));
    return CudaLaunchStatus(
        cuda::LaunchLayerNorm(dtype(), kRms, x.data(), ctx.inputs[1]->data(),
                              bias == nullptr ? nullptr : bias->data(), ctx.outputs[0]->data(),
                              kRms ? nullptr : OptionalStatistics(ctx, 1),
                              OptionalStatistics(ctx, kRms ? 1 : 2), l.outer, l.n, attrs_.epsilon,
                              NativeStream(ctx)),
        "layer norm kernel");
  }
};

template <bool kRms>
class CudaNormalizationGradKernel final : public NormalizationKernelBase {
 public:
  using NormalizationKernelBase::NormalizationKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[1];
    ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(x));
    ZG_RETURN_IF_ERROR(CheckWholeRow(ctx.inputs[2], l.n, "scale"));
    return CudaLaunchStatus(
        cuda::LaunchLayerNormGrad(
            dtype(), kRms, ctx.inputs[0]->data(), x.data(), ctx.inputs[2]->data(),
            kRms ? nullptr : ctx.inputs[3]->data_as<const float>(),
            ctx.inputs[kRms ? 3 : 4]->data_as<const float>(), ctx.outputs[0]->data(),
            ctx.outputs[1]->data(), kRms ? nullptr : ctx.outputs[2]->data(), l.outer, l.n,
            NativeStream(ctx)),
        "layer norm gradient kernel");
  }
};

template <typename Kernel>
Status Register(KernelRegistry& registry, std::string_view domain, std::string_view name) {
  return registry.Register({std::string(domain),
                            std::string(name),
                            DeviceType::kCuda,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            MakeKernelWithAttrs<Kernel>});
}

}  // namespace

Status RegisterCudaLayerNormKernels(KernelRegistry& registry) {
  constexpr std::string_view kMicrosoft = "com.microsoft";
  ZG_RETURN_IF_ERROR(Register<CudaNormalizationKernel<false>>(registry, "", "LayerNormalization"));
  ZG_RETURN_IF_ERROR(Register<CudaNormalizationKernel<true>>(registry, kMicrosoft,
                                                             "SimplifiedLayerNormalization"));
  ZG_RETURN_IF_ERROR(
      Register<CudaNormalizationGradKernel<false>>(registry, kMicrosoft, "LayerNormalizationGrad"));
  return Register<CudaNormalizationGradKernel<true>>(registry, kMicrosoft,
                                                     "SimplifiedLayerNormalizationGrad");
}

}  // namespace zerograph::runtime
