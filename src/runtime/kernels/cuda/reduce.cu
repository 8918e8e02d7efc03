// ONNX's reductions (reduce_ops.h) and ArgMax/ArgMin. Few long reductions: one block per output,
// threads striding over the reduced elements, then a shuffle tree. Many short ones: one thread per
// output, neighbouring threads reading neighbouring columns. Accumulators are those of the CPU
// (double for floats, int64 where integers are exact), so results match it to the rounding of the
// final store.

#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/reduce_launch.h"
#include "runtime/kernels/reduce_ops.h"

namespace zerograph::runtime::cuda {
namespace {

template <ReduceOp kOp, typename T>
using Acc = ReduceAcc<kOp, Arith<T>>;

template <ReduceOp kOp, typename T>
__global__ void ReducePerThreadKernel(const T* x, T* y, int64_t outputs, int64_t count,
                                      StridedIndexer outputs_index, StridedIndexer reduced_index) {
  using A = Acc<kOp, T>;
  using R = Reducer<kOp, A>;
  for (int64_t o = GlobalThread(); o < outputs; o += GridThreads()) {
    int64_t base[1];
    StridedOffsets<1>(outputs_index, o, base);
    ReduceState<A> s = R::Init();
    for (int64_t r = 0; r < count; ++r) {
      int64_t offset[1];
      StridedOffsets<1>(reduced_index, r, offset);
      R::Add(s, static_cast<A>(Load(x[base[0] + offset[0]])));
    }
    y[o] = Store<T>(static_cast<Arith<T>>(R::Finish(s, count)));
  }
}

constexpr int kReduceBlock = 256;

template <ReduceOp kOp, typename A>
__device__ __forceinline__ void WarpMerge(ReduceState<A>& s) {
  for (int step = 16; step > 0; step /= 2) {
    const ReduceState<A> other = {__shfl_down_sync(0xffffffffu, s.value, step),
                                  __shfl_down_sync(0xffffffffu, s.shift, step)};
    Reducer<kOp, A>::Merge(s, other);
  }
}

template <ReduceOp kOp, typename T>
__global__ void ReducePerBlockKernel(const T* x, T* y, int64_t outputs, int64_t count,
                                     StridedIndexer outputs_index, StridedIndexer reduced_index) {
  using A = Acc<kOp, T>;
  using R = Reducer<kOp, A>;
  __shared__ ReduceState<A> warp_states[kReduceBlock / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    int64_t base[1];
    StridedOffsets<1>(outputs_index, o, base);
    ReduceState<A> s = R::Init();
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
      int64_t offset[1];
      StridedOffsets<1>(reduced_index, r, offset);
      R::Add(s, static_cast<A>(Load(x[base[0] + offset[0]])));
    }
    WarpMerge<kOp>(s);
    if (lane == 0) warp_states[warp] = s;
    __syncthreads();
    if (warp == 0) {
      s = lane < kReduceBlock / 32 ? warp_states[lane] : R::Init();
      WarpMerge<kOp>(s);
      if (lane == 0) y[o] = Store<T>(static_cast<Arith<T>>(R::Finish(s, count)));
    }
    __syncthreads();  // warp_states is reused for the next output
  }
}

template <ReduceOp kOp>
cudaError_t LaunchReduceOp(DataType dtype, const void* x, void* y, int64_t outputs, int64_t count,
                           const StridedIndexer& outputs_index, const StridedIndexer& reduced_index,
                           cudaStream_t stream) {
  return DispatchDtypes(NumericDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* px = static_cast<const T*>(x);
    T* py = static_cast<T*>(y);
    // A block per output pays off once a reduction is long enough to keep its threads busy.
    constexpr int64_t kLongReduction = 1024;
    if (count >= kLongReduction) {
      const unsigned grid = static_cast<unsigned>(std::min<int64_t>(outputs, 65535));
      ReducePerBlockKernel<kOp, T>
          <<<grid, kReduceBlock, 0, stream>>>(px, py, outputs, count, outputs_index, reduced_index);
    } else {
      ReducePerThreadKernel<kOp, T><<<GridFor(outputs), kBlock, 0, stream>>>(
          px, py, outputs, count, outputs_index, reduced_index);
    }
    return cudaGetLastError();
  });
}

// One thread per (outer, inner) output, scanning the n along the axis.
template <bool kMax, typename T>
__global__ void ArgReduceKernel(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner,
                                bool last) {
  for (int64_t o = GlobalThread(); o < outer * inner; o += GridThreads()) {
    const T* column = x + (o / inner) * n * inner + o % inner;
    Arith<T> best = Load(column[0]);
    int64_t index = 0;
    for (int64_t k = 1; k < n; ++k) {
      const Arith<T> v = Load(column[k * inner]);
      const bool better = last ? (kMax ? v >= best : v <= best) : (kMax ? v > best : v < best);
      if (better) {
        best = v;
        index = k;
      }
    }
    y[o] = index;
  }
}

}  // namespace

cudaError_t LaunchReduce(DataType dtype, ReduceOp op, const void* x, void* y, int64_t outputs,
                         int64_t count, const StridedIndexer& outputs_index,
                         const StridedIndexer& reduced_index, cudaStream_t stream) {
  if (outputs == 0) return cudaSuccess;
  switch (op) {
#define ZG_REDUCE_CASE(kOp) \
  case kOp:                 \
    return LaunchReduceOp<kOp>(dtype, x, y, outputs, count, outputs_index, reduced_index, stream);
    ZG_REDUCE_CASE(ReduceOp::kSum)
    ZG_REDUCE_CASE(ReduceOp::kMean)
    ZG_REDUCE_CASE(ReduceOp::kMax)
    ZG_REDUCE_CASE(ReduceOp::kMin)
    ZG_REDUCE_CASE(ReduceOp::kProd)
    ZG_REDUCE_CASE(ReduceOp::kSumSquare)
    ZG_REDUCE_CASE(ReduceOp::kL1)
    ZG_REDUCE_CASE(ReduceOp::kL2)
    ZG_REDUCE_CASE(ReduceOp::kLogSum)
    ZG_REDUCE_CASE(ReduceOp::kLogSumExp)
#undef ZG_REDUCE_CASE
  }
  return cudaErrorNotSupported;
}

cudaError_t LaunchArgReduce(DataType dtype, bool max, bool select_last_index, const void* x,
                            int64_t* y, int64_t outer, int64_t n, int64_t inner,
                            cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  return DispatchDtypes(NumericDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* px = static_cast<const T*>(x);
    if (max) {
      ArgReduceKernel<true, T><<<GridFor(outer * inner), kBlock, 0, stream>>>(
          px, y, outer, n, inner, select_last_index);
    } else {
      ArgReduceKernel<false, T><<<GridFor(outer * inner), kBlock, 0, stream>>>(
          px, y, outer, n, inner, select_last_index);
    }
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
