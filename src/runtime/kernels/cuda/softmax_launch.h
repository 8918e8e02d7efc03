#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_SOFTMAX_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_SOFTMAX_LAUNCH_H_

// The launcher of Softmax, LogSoftmax and their gradients (softmax.cu), plain C++ for the host
// compiler.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kSoftmaxGrad, kLogSoftmaxGrad };

// Along the n of [outer, n, inner]: out = softmax(a) or its log (b unused), or for the gradients
// dX from a = dY and b = Y (SoftmaxGrad: Y·(dY - Σ dY·Y); LogSoftmaxGrad: dY - exp(Y)·Σ dY).
// When inner is 1 a block runs each row; otherwise a thread runs each (outer, inner) column.
cudaError_t LaunchSoftmax(DataType dtype, SoftmaxKind kind, const void* a, const void* b, void* out,
                          int64_t outer, int64_t n, int64_t inner, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_SOFTMAX_LAUNCH_H_
