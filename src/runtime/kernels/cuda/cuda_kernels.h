#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUDA_KERNELS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUDA_KERNELS_H_

#include "zerograph/core/status.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {

// Each family of CUDA kernels registers itself here; RegisterCudaKernels calls them all. Each
// registers the ops, dtypes and type input of its CPU counterpart in kernels/cpu/.
Status RegisterCudaElementwiseKernels(KernelRegistry& registry);   // binary, unary ops, Cast
Status RegisterCudaMatMulKernels(KernelRegistry& registry);        // MatMul Gemm (cuBLAS)
Status RegisterCudaReduceKernels(KernelRegistry& registry);        // reductions, ArgMax ArgMin
Status RegisterCudaSoftmaxKernels(KernelRegistry& registry);       // Softmax LogSoftmax, gradients
Status RegisterCudaLayerNormKernels(KernelRegistry& registry);     // LayerNormalization, RMS, grads
Status RegisterCudaDataMovementKernels(KernelRegistry& registry);  // shape ops, fused buffers
Status RegisterCudaGatherKernels(KernelRegistry& registry);     // Gather Scatter Trilu GatherGrad
Status RegisterCudaOptimizerKernels(KernelRegistry& registry);  // AdamW SGD Adam Momentum Adagrad
Status RegisterCudaGradientControlKernels(
    KernelRegistry& registry);                             // SumOfSquares GradientControl
Status RegisterCudaLossKernels(KernelRegistry& registry);  // SoftmaxCrossEntropyLoss NLL, grads
Status RegisterCudaTrainingOpKernels(KernelRegistry& registry);   // Dropout(Grad) InPlaceAccum.
Status RegisterCudaFusedMatMulKernels(KernelRegistry& registry);  // FusedMatMul (cuBLAS)

// The element-wise ops outside elementwise_ops.h's tables (elementwise_attr_ops.cc): LeakyRelu Gelu
// Clip Pow Mod Max Min Sum Mean Where; com.microsoft BiasGeluGrad_dX DivGrad Scale.
Status RegisterCudaElementwiseAttrKernels(KernelRegistry& registry);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUDA_KERNELS_H_
