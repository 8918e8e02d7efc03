#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_

#include "zerograph/core/status.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {

// Each family of CPU kernels registers itself here; RegisterCpuKernels calls them all.
Status RegisterCpuElementwiseKernels(KernelRegistry& registry);  // elementwise_ops.h's tables
Status RegisterCpuMatMulKernels(KernelRegistry& registry);       // MatMul Gemm
Status RegisterCpuReduceKernels(KernelRegistry& registry);       // ReduceSum ReduceMax ...
Status RegisterCpuArgReduceKernels(KernelRegistry& registry);    // ArgMax ArgMin
Status RegisterCpuSoftmaxKernels(KernelRegistry& registry);      // Softmax LogSoftmax, gradients
Status RegisterCpuLayerNormKernels(KernelRegistry& registry);    // LayerNormalization, RMS, grads
Status RegisterCpuShapeKernels(KernelRegistry& registry);  // Identity Reshape Transpose Constant
Status RegisterCpuCastKernels(KernelRegistry& registry);   // Cast CastLike
Status RegisterCpuDataMovementKernels(KernelRegistry& registry);  // Slice Concat Expand Shape ...
Status RegisterCpuGatherKernels(KernelRegistry& registry);        // Gather Scatter Trilu GatherGrad
Status RegisterCpuOptimizerKernels(KernelRegistry& registry);     // AdamW SGD
Status RegisterCpuGradientControlKernels(KernelRegistry& registry);  // SumOfSquares GradientControl
Status RegisterCpuOnnxOptimizerKernels(KernelRegistry& registry);    // Adam Momentum Adagrad
Status RegisterCpuFusedBufferKernels(KernelRegistry& registry);  // CoalesceTensors TensorViews ...
Status RegisterCpuCollectiveKernels(KernelRegistry& registry);  // ReduceScatter AllGather AllReduce
Status RegisterCpuLossKernels(KernelRegistry& registry);  // SoftmaxCrossEntropyLoss NLL and grads
Status RegisterCpuDropoutKernels(KernelRegistry& registry);      // Dropout DropoutGrad
Status RegisterCpuFusedMatMulKernels(KernelRegistry& registry);  // FusedMatMul
Status RegisterCpuAccumulatorKernels(KernelRegistry& registry);  // InPlaceAccumulatorV2

// The element-wise ops outside elementwise_ops.h's tables: LeakyRelu Gelu Clip Pow Mod; Max Min Sum
// Mean Where; com.microsoft BiasGeluGrad_dX DivGrad Scale.
Status RegisterCpuElementwiseAttrKernels(KernelRegistry& registry);
Status RegisterCpuElementwiseNaryKernels(KernelRegistry& registry);
Status RegisterCpuMicrosoftElementwiseKernels(KernelRegistry& registry);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
