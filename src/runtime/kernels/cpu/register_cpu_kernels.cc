#include "zerograph/runtime/kernel_registry.h"

#include "runtime/kernels/cpu/cpu_kernels.h"

namespace zerograph::runtime {

Status RegisterCpuKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(RegisterCpuElementwiseKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuElementwiseAttrKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuElementwiseNaryKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuMicrosoftElementwiseKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuMatMulKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuReduceKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuArgReduceKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuSoftmaxKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuLayerNormKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuShapeKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuCastKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuDataMovementKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuGatherKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuOptimizerKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuGradientControlKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuOnnxOptimizerKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuFusedBufferKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuCollectiveKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuLossKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuDropoutKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuFusedMatMulKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCpuAccumulatorKernels(registry));
  return Status::Ok();
}

}  // namespace zerograph::runtime
