#include "runtime/kernels/collectives.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {

Status RegisterCudaKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(RegisterCudaElementwiseKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaElementwiseAttrKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaMatMulKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaReduceKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaSoftmaxKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaLayerNormKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaDataMovementKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaGatherKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaOptimizerKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaGradientControlKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaLossKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaTrainingOpKernels(registry));
  ZG_RETURN_IF_ERROR(RegisterCudaFusedMatMulKernels(registry));
  // The collectives only call the communicator (NCCL on a GPU): the CPU's kernels serve as they
  // are.
  return RegisterCollectiveKernels(registry, DeviceType::kCuda);
}

}  // namespace zerograph::runtime
