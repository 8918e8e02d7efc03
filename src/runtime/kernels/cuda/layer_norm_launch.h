#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_LAYER_NORM_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_LAYER_NORM_LAUNCH_H_

// The launchers of LayerNormalization, SimplifiedLayerNormalization and their gradients
// (layer_norm.cu), plain C++ for the host compiler.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// Over `rows` rows of n: y = (x - mean) · inv_std · scale + bias (bias may be null), or with `rms`
// y = x · inv_rms · scale. scale and bias hold n values of x's dtype. `mean` and `inv_std` (fp32,
// one per row) may be null. A block runs each row; its sums are in double.
cudaError_t LaunchLayerNorm(DataType dtype, bool rms, const void* x, const void* scale,
                            const void* bias, void* y, float* mean, float* inv_std, int64_t rows,
                            int64_t n, float epsilon, cudaStream_t stream);

// The gradients: dx per row (a block each), then dscale and dbias (null with `rms`) per element
// of a row, summed over the rows (a block per 32 elements). mean is null with `rms`.
cudaError_t LaunchLayerNormGrad(DataType dtype, bool rms, const void* dy, const void* x,
                                const void* scale, const float* mean, const float* inv_std,
                                void* dx, void* dscale, void* dbias, int64_t rows, int64_t n,
                                cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_LAYER_NORM_LAUNCH_H_
