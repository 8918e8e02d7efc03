#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_GRADIENT_CONTROL_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_GRADIENT_CONTROL_LAUNCH_H_

// Launchers of org.zerograph SumOfSquares and GradientControl (gradient_control.cu), plain C++ for
// the host compiler. Everything stays on the device: the sum, the control and the loss scale are
// read and written there, so a step with mixed precision never waits for the host.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/kernels/gradient_control.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// SumOfSquares sums each tensor in this many blocks of double partials, then one thread adds
// them in order to the running total (the workspace's last double): a fixed order, so a run
// repeats bit for bit.
inline constexpr int kSumOfSquaresBlocks = 256;
inline constexpr int64_t kSumOfSquaresWorkspaceDoubles = kSumOfSquaresBlocks + 1;

// Adds Σ x² over the n elements of x (fp32, fp16 or bf16) to the running total, which `first`
// starts from 0; when `sum` is not null, stores the total there as fp32 (the last tensor).
cudaError_t LaunchSumOfSquares(DataType dtype, const void* x, int64_t n, bool first, float* sum,
                               double* workspace, cudaStream_t stream);

// GradientControl in one thread. scale, good_steps, new_scale and new_good_steps are all null
// (no loss scaling) or all device scalars.
cudaError_t LaunchGradientControl(const GradientControlAttrs& attrs, const float* sum_squares,
                                  const float* scale, const float* good_steps, float* control,
                                  float* new_scale, float* new_good_steps, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_GRADIENT_CONTROL_LAUNCH_H_
