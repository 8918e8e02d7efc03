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
Status RegisterCpuCastKernels(KernelRegistry& registry);   // Cast
Status RegisterCpuOptimizerKernels(KernelRegistry& registry);      // AdamW SGD
Status RegisterCpuOnnxOptimizerKernels(KernelRegistry& registry);  // Adam Momentum Adagrad
Status RegisterCpuFusedBufferKernels(KernelRegistry& registry);  // CoalesceTensors TensorViews ...
Status RegisterCpuCollectiveKernels(KernelRegistry& registry);  // ReduceScatter AllGather AllReduce
Status RegisterCpuLossKernels(KernelRegistry& registry);  // SoftmaxCrossEntropyLoss NLL and grads
Status RegisterCpuDropoutKernels(KernelRegistry& registry);      // Dropout DropoutGrad
Status RegisterCpuFusedMatMulKernels(KernelRegistry& registry);  // FusedMatMul
Status RegisterCpuAccumulatorKernels(KernelRegistry& registry);  // InPlaceAccumulatorV2

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
