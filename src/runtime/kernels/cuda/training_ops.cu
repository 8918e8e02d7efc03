// Dropout, DropoutGrad and InPlaceAccumulatorV2: grid-stride loops, one element per thread.
// Dropout's mask is the CPU's counter-based hash, so both devices draw the same mask.

#include <cstdint>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/training_ops_launch.h"
#include "runtime/kernels/dropout_mask.h"

namespace zerograph::runtime::cuda {
namespace {

template <typename T>
__global__ void DropoutKernel(const T* x, T* y, bool* mask, int64_t count, uint64_t key,
                              uint32_t threshold, Arith<T> scale) {
  for (int64_t i = GlobalThread(); i < count; i += GridThreads()) {
    const bool keep = DropoutKeeps(key, i, threshold);
    y[i] = keep ? Store<T>(Load(x[i]) * scale) : Store<T>(Arith<T>(0));
    if (mask != nullptr) mask[i] = keep;
  }
}

template <typename T>
__global__ void DropoutGradKernel(const T* dy, const bool* mask, T* dx, int64_t count,
                                  Arith<T> scale) {
  for (int64_t i = GlobalThread(); i < count; i += GridThreads()) {
    dx[i] = mask[i] ? Store<T>(Load(dy[i]) * scale) : Store<T>(Arith<T>(0));
  }
}

template <typename T, typename V>
__global__ void AccumulateKernel(const T* buffer, const V* value, T* out, int64_t count,
                                 bool overwrite) {
  for (int64_t i = GlobalThread(); i < count; i += GridThreads()) {
    const auto v = static_cast<Arith<T>>(Load(value[i]));
    out[i] = Store<T>(overwrite ? v : Load(buffer[i]) + v);
  }
}

template <typename T>
__global__ void FillOneKernel(T* y, int64_t count) {
  for (int64_t i = GlobalThread(); i < count; i += GridThreads()) y[i] = Store<T>(Arith<T>(1));
}

}  // namespace

cudaError_t LaunchDropout(DataType dtype, const void* x, void* y, bool* mask, int64_t count,
                          uint64_t key, uint32_t threshold, double scale, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    DropoutKernel<T><<<GridFor(count), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), mask, count, key, threshold,
        static_cast<Arith<T>>(scale));
    return cudaGetLastError();
  });
}

cudaError_t LaunchDropoutGrad(DataType dtype, const void* dy, const bool* mask, void* dx,
                              int64_t count, double scale, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    DropoutGradKernel<T><<<GridFor(count), kBlock, 0, stream>>>(
        static_cast<const T*>(dy), mask, static_cast<T*>(dx), count, static_cast<Arith<T>>(scale));
    return cudaGetLastError();
  });
}

cudaError_t LaunchAccumulate(DataType dtype, DataType value_dtype, const void* buffer,
                             const void* value, void* out, int64_t count, bool overwrite,
                             cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto t) {
    return DispatchDtypes(FloatDtypes{}, value_dtype, [&](auto v) {
      using T = decltype(t);
      using V = decltype(v);
      AccumulateKernel<T, V><<<GridFor(count), kBlock, 0, stream>>>(
          static_cast<const T*>(buffer), static_cast<const V*>(value), static_cast<T*>(out), count,
          overwrite);
      return cudaGetLastError();
    });
  });
}

cudaError_t LaunchFillOne(DataType dtype, void* y, int64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    FillOneKernel<T><<<GridFor(count), kBlock, 0, stream>>>(static_cast<T*>(y), count);
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
