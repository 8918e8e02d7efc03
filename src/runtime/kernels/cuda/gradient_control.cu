// SumOfSquares: each block grid-strides over a tensor accumulating x² in double, reduces its
// threads (warp shuffles, then the warps in order) into one partial; one thread then adds the
// kSumOfSquaresBlocks partials in order. GradientControl: one thread runs the shared arithmetic
// of gradient_control.h.

#include <cstdint>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/gradient_control_launch.h"

namespace zerograph::runtime::cuda {
namespace {

constexpr int kWarps = kBlock / 32;

template <typename T>
__global__ void BlockSquaresKernel(const T* x, int64_t n, double* partials) {
  double sum = 0;
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const double v = Load(x[i]);
    sum += v * v;
  }
  for (int step = 16; step > 0; step /= 2) sum += __shfl_down_sync(0xffffffffu, sum, step);
  __shared__ double warps[kWarps];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double block = 0;
    for (int w = 0; w < kWarps; ++w) block += warps[w];
    partials[blockIdx.x] = block;
  }
}

__global__ void AddPartialsKernel(double* workspace, bool first, float* sum) {
  double total = first ? 0.0 : workspace[kSumOfSquaresBlocks];
  for (int b = 0; b < kSumOfSquaresBlocks; ++b) total += workspace[b];
  workspace[kSumOfSquaresBlocks] = total;
  if (sum != nullptr) *sum = static_cast<float>(total);
}

__global__ void GradientControlKernel(GradientControlAttrs attrs, const float* sum_squares,
                                      const float* scale, const float* good_steps, float* control,
                                      float* new_scale, float* new_good_steps) {
  const bool scaled = scale != nullptr;
  const GradientControlResult r = ComputeGradientControl(
      attrs, *sum_squares, scaled, scaled ? *scale : 1.0f, scaled ? *good_steps : 0.0f);
  for (int i = 0; i < 3; ++i) control[i] = r.control[i];
  if (scaled) {
    *new_scale = r.new_scale;
    *new_good_steps = r.new_good_steps;
  }
}

}  // namespace

cudaError_t LaunchSumOfSquares(DataType dtype, const void* x, int64_t n, bool first, float* sum,
                               double* workspace, cudaStream_t stream) {
  const cudaError_t result = DispatchDtype<float, __half, __nv_bfloat16>(dtype, [&](auto tag) {
    using T = decltype(tag);
    BlockSquaresKernel<T>
        <<<kSumOfSquaresBlocks, kBlock, 0, stream>>>(static_cast<const T*>(x), n, workspace);
    return cudaGetLastError();
  });
  if (result != cudaSuccess) return result;
  AddPartialsKernel<<<1, 1, 0, stream>>>(workspace, first, sum);
  return cudaGetLastError();
}

cudaError_t LaunchGradientControl(const GradientControlAttrs& attrs, const float* sum_squares,
                                  const float* scale, const float* good_steps, float* control,
                                  float* new_scale, float* new_good_steps, cudaStream_t stream) {
  GradientControlKernel<<<1, 1, 0, stream>>>(attrs, sum_squares, scale, good_steps, control,
                                             new_scale, new_good_steps);
  return cudaGetLastError();
}

}  // namespace zerograph::runtime::cuda
