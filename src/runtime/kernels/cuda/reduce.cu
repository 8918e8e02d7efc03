// ReduceSum and ReduceMean. Few long sums: one block per output, threads striding over the
// reduced elements, then a shuffle tree. Many short sums: one thread per output, neighbouring
// threads reading neighbouring columns. Accumulation is in double (int64 for integers), as on
// the CPU, so results match it to the rounding of the final store.

#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/reduce_launch.h"

namespace zerograph::runtime::cuda {
namespace {

template <typename T>
using Accumulator = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <typename T, typename Acc>
__device__ __forceinline__ T Finish(Acc sum, int64_t count, bool mean) {
  const Acc value = mean ? sum / static_cast<Acc>(count) : sum;
  return Store<T>(static_cast<Arith<T>>(value));
}

template <typename T>
__global__ void ReducePerThreadKernel(const T* x, T* y, int64_t outputs, int64_t count, bool mean,
                                      StridedIndexer outputs_index, StridedIndexer reduced_index) {
  using Acc = Accumulator<T>;
  for (int64_t o = GlobalThread(); o < outputs; o += GridThreads()) {
    int64_t base[1];
    StridedOffsets<1>(outputs_index, o, base);
    Acc sum = 0;
    for (int64_t r = 0; r < count; ++r) {
      int64_t offset[1];
      StridedOffsets<1>(reduced_index, r, offset);
      sum += static_cast<Acc>(Load(x[base[0] + offset[0]]));
    }
    y[o] = Finish<T>(sum, count, mean);
  }
}

constexpr int kReduceBlock = 256;

template <typename T>
__global__ void ReducePerBlockKernel(const T* x, T* y, int64_t outputs, int64_t count, bool mean,
                                     StridedIndexer outputs_index, StridedIndexer reduced_index) {
  using Acc = Accumulator<T>;
  __shared__ Acc warp_sums[kReduceBlock / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    int64_t base[1];
    StridedOffsets<1>(outputs_index, o, base);
    Acc sum = 0;
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
      int64_t offset[1];
      StridedOffsets<1>(reduced_index, r, offset);
      sum += static_cast<Acc>(Load(x[base[0] + offset[0]]));
    }
    for (int step = 16; step > 0; step /= 2) sum += __shfl_down_sync(0xffffffffu, sum, step);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      sum = lane < kReduceBlock / 32 ? warp_sums[lane] : Acc(0);
      for (int step = 16; step > 0; step /= 2) sum += __shfl_down_sync(0xffffffffu, sum, step);
      if (lane == 0) y[o] = Finish<T>(sum, count, mean);
    }
    __syncthreads();  // warp_sums is reused for the next output
  }
}

}  // namespace

cudaError_t LaunchReduce(DataType dtype, bool mean, const void* x, void* y, int64_t outputs,
                         int64_t count, const StridedIndexer& outputs_index,
                         const StridedIndexer& reduced_index, cudaStream_t stream) {
  if (outputs == 0) return cudaSuccess;
  return DispatchDtype<float, double, __half, __nv_bfloat16, int32_t, int64_t>(
      dtype, [&](auto tag) {
        using T = decltype(tag);
        const T* px = static_cast<const T*>(x);
        T* py = static_cast<T*>(y);
        // A block per output pays off once a sum is long enough to keep its threads busy.
        constexpr int64_t kLongSum = 1024;
        if (count >= kLongSum) {
          const unsigned grid = static_cast<unsigned>(std::min<int64_t>(outputs, 65535));
          ReducePerBlockKernel<T><<<grid, kReduceBlock, 0, stream>>>(px, py, outputs, count, mean,
                                                                     outputs_index, reduced_index);
        } else {
          ReducePerThreadKernel<T><<<GridFor(outputs), kBlock, 0, stream>>>(
              px, py, outputs, count, mean, outputs_index, reduced_index);
        }
        return cudaGetLastError();
      });
}

}  // namespace zerograph::runtime::cuda
