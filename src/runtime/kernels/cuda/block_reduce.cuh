#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_BLOCK_REDUCE_CUH_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_BLOCK_REDUCE_CUH_

// Sums and maxima over the threads of a block (a warp shuffle tree, then one across the warps), for
// the kernels that run a block per row (softmax.cu, layer_norm.cu).

#include <cuda_runtime.h>

namespace zerograph::runtime::cuda {

// Threads per block of the row kernels: a multiple of 32.
inline constexpr int kRowBlock = 256;

struct SumOf {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct MaxOf {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a > b ? a : b;
  }
};

// Every thread of the block gets `op` over all threads' `value`. `scratch` holds a value per warp;
// the call synchronizes the block, before and after using it.
template <typename A, typename Op>
__device__ __forceinline__ A BlockReduce(A value, Op op, A* scratch) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>((blockDim.x + 31) / 32);
  for (int step = 16; step > 0; step /= 2) {
    value = op(value, __shfl_down_sync(0xffffffffu, value, step));
  }
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < warps; ++w) value = op(value, scratch[w]);
  return value;
}

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_BLOCK_REDUCE_CUH_
