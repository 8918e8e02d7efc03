// Softmax, LogSoftmax and their gradients. A row that is contiguous (inner == 1) is one block's:
// its maximum and sum come from block reductions, in fp32 for the 16-bit floats (double for
// double), as on the CPU. Strided rows (the axis is not the last) are one thread's each, so that
// neighbouring threads read neighbouring columns.

#include <cstdint>

#include "runtime/kernels/cuda/block_reduce.cuh"
#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/softmax_launch.h"

namespace zerograph::runtime::cuda {
namespace {

template <typename A>
__device__ __forceinline__ A Exp(A v) {
  return exp(v);
}
template <>
__device__ __forceinline__ float Exp(float v) {
  return expf(v);
}
template <typename A>
__device__ __forceinline__ A Log(A v) {
  return log(v);
}
template <>
__device__ __forceinline__ float Log(float v) {
  return logf(v);
}

// One row of n at stride `stride` (1 for a block's row; inner for a thread's column), walked by
// `threads` workers from `first`: the reductions are `reduce`'s (a block's, or none).
template <SoftmaxKind kKind, typename T, typename Reduce>
__device__ __forceinline__ void SoftmaxRow(const T* a, const T* b, T* out, int64_t n,
                                           int64_t stride, int64_t first, int64_t threads,
                                           Reduce reduce) {
  using A = Arith<T>;
  if constexpr (kKind == SoftmaxKind::kSoftmax || kKind == SoftmaxKind::kLogSoftmax) {
    A max = -INFINITY;
    for (int64_t k = first; k < n; k += threads) max = MaxOf()(max, Load(a[k * stride]));
    max = reduce(max, MaxOf());
    A sum = 0;
    for (int64_t k = first; k < n; k += threads) sum += Exp(Load(a[k * stride]) - max);
    sum = reduce(sum, SumOf());
    // LogSoftmax: (x - max) - log(sum), not x - (max + log(sum)), which rounds at max's size.
    const A scale = kKind == SoftmaxKind::kSoftmax ? A(1) / sum : Log(sum);
    for (int64_t k = first; k < n; k += threads) {
      const A shifted = Load(a[k * stride]) - max;
      out[k * stride] =
          Store<T>(kKind == SoftmaxKind::kSoftmax ? Exp(shifted) * scale : shifted - scale);
    }
  } else {
    A sum = 0;
    for (int64_t k = first; k < n; k += threads) {
      const A g = Load(a[k * stride]);
      sum += kKind == SoftmaxKind::kSoftmaxGrad ? g * Load(b[k * stride]) : g;
    }
    sum = reduce(sum, SumOf());
    for (int64_t k = first; k < n; k += threads) {
      const A g = Load(a[k * stride]);
      const A y = Load(b[k * stride]);
      out[k * stride] =
          Store<T>(kKind == SoftmaxKind::kSoftmaxGrad ? y * (g - sum) : g - Exp(y) * sum);
    }
  }
}

template <SoftmaxKind kKind, typename T>
__global__ void SoftmaxRowsKernel(const T* a, const T* b, T* out, int64_t rows, int64_t n) {
  using A = Arith<T>;
  __shared__ A scratch[kRowBlock / 32];
  auto reduce = [&](A v, auto op) { return BlockReduce(v, op, scratch); };
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    SoftmaxRow<kKind>(a + r * n, b == nullptr ? nullptr : b + r * n, out + r * n, n, 1, threadIdx.x,
                      blockDim.x, reduce);
  }
}

template <SoftmaxKind kKind, typename T>
__global__ void SoftmaxColumnsKernel(const T* a, const T* b, T* out, int64_t outer, int64_t n,
                                     int64_t inner) {
  auto alone = [](auto v, auto) { return v; };
  for (int64_t c = GlobalThread(); c < outer * inner; c += GridThreads()) {
    const int64_t offset = (c / inner) * n * inner + c % inner;
    SoftmaxRow<kKind>(a + offset, b == nullptr ? nullptr : b + offset, out + offset, n, inner, 0, 1,
                      alone);
  }
}

template <SoftmaxKind kKind>
cudaError_t Launch(DataType dtype, const void* a, const void* b, void* out, int64_t outer,
                   int64_t n, int64_t inner, cudaStream_t stream) {
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    T* po = static_cast<T*>(out);
    if (inner == 1) {
      const unsigned grid = static_cast<unsigned>(std::min<int64_t>(outer, 65535));
      SoftmaxRowsKernel<kKind, T><<<grid, kRowBlock, 0, stream>>>(pa, pb, po, outer, n);
    } else {
      SoftmaxColumnsKernel<kKind, T>
          <<<GridFor(outer * inner), kBlock, 0, stream>>>(pa, pb, po, outer, n, inner);
    }
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t LaunchSoftmax(DataType dtype, SoftmaxKind kind, const void* a, const void* b, void* out,
                          int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  if (outer * n * inner == 0) return cudaSuccess;
  switch (kind) {
    case SoftmaxKind::kSoftmax:
      return Launch<SoftmaxKind::kSoftmax>(dtype, a, b, out, outer, n, inner, stream);
    case SoftmaxKind::kLogSoftmax:
      return Launch<SoftmaxKind::kLogSoftmax>(dtype, a, b, out, outer, n, inner, stream);
    case SoftmaxKind::kSoftmaxGrad:
      return Launch<SoftmaxKind::kSoftmaxGrad>(dtype, a, b, out, outer, n, inner, stream);
    case SoftmaxKind::kLogSoftmaxGrad:
      return Launch<SoftmaxKind::kLogSoftmaxGrad>(dtype, a, b, out, outer, n, inner, stream);
  }
  return cudaErrorNotSupported;
}

}  // namespace zerograph::runtime::cuda
