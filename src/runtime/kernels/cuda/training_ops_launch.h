#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_TRAINING_OPS_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_TRAINING_OPS_LAUNCH_H_

// The launchers of Dropout, DropoutGrad and InPlaceAccumulatorV2 (training_ops.cu), plain C++ for
// the host compiler. Arithmetic in fp32 for the 16-bit floats, as on the CPU.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// Training-mode dropout: y = keep ? x · scale : 0 with keep from DropoutKeeps(key, i, threshold)
// (dropout_mask.h, the CPU's hash); mask[i] = keep when mask is not null.
cudaError_t LaunchDropout(DataType dtype, const void* x, void* y, bool* mask, int64_t count,
                          uint64_t key, uint32_t threshold, double scale, cudaStream_t stream);

// dx = mask ? dy · scale : 0.
cudaError_t LaunchDropoutGrad(DataType dtype, const void* dy, const bool* mask, void* dx,
                              int64_t count, double scale, cudaStream_t stream);

// out = overwrite ? value : buffer + value, value of `value_dtype` converted to `dtype`.
cudaError_t LaunchAccumulate(DataType dtype, DataType value_dtype, const void* buffer,
                             const void* value, void* out, int64_t count, bool overwrite,
                             cudaStream_t stream);

// y[i] = 1 in `dtype` (Dropout-7's mask, all kept).
cudaError_t LaunchFillOne(DataType dtype, void* y, int64_t count, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_TRAINING_OPS_LAUNCH_H_
