#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_DEVICE_TYPES_CUH_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_DEVICE_TYPES_CUH_

// What the .cu files share: the device type of each dtype, fp32 arithmetic for the 16-bit floats
// (load, compute, store rounding to nearest even, as the CPU's half.h does), dtype dispatch,
// strided offsets and launch shapes.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/cuda/strided_indexer.h"
#include "runtime/kernels/dtype_list.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

template <typename T>
struct DtypeOf;
template <>
struct DtypeOf<float> {
  static constexpr DataType value = DataType::kFloat32;
};
template <>
struct DtypeOf<double> {
  static constexpr DataType value = DataType::kFloat64;
};
template <>
struct DtypeOf<__half> {
  static constexpr DataType value = DataType::kFloat16;
};
template <>
struct DtypeOf<__nv_bfloat16> {
  static constexpr DataType value = DataType::kBFloat16;
};
template <>
struct DtypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DtypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DtypeOf<int8_t> {
  static constexpr DataType value = DataType::kInt8;
};
template <>
struct DtypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUint8;
};
template <>
struct DtypeOf<int16_t> {
  static constexpr DataType value = DataType::kInt16;
};
template <>
struct DtypeOf<uint16_t> {
  static constexpr DataType value = DataType::kUint16;
};
template <>
struct DtypeOf<uint32_t> {
  static constexpr DataType value = DataType::kUint32;
};
template <>
struct DtypeOf<uint64_t> {
  static constexpr DataType value = DataType::kUint64;
};
template <>
struct DtypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};

// The device type of each dtype the element-wise tables name (elementwise_ops.h).
template <DataType D>
struct CudaType;
template <>
struct CudaType<DataType::kFloat32> {
  using type = float;
};
template <>
struct CudaType<DataType::kFloat64> {
  using type = double;
};
template <>
struct CudaType<DataType::kFloat16> {
  using type = __half;
};
template <>
struct CudaType<DataType::kBFloat16> {
  using type = __nv_bfloat16;
};
template <>
struct CudaType<DataType::kInt32> {
  using type = int32_t;
};
template <>
struct CudaType<DataType::kInt64> {
  using type = int64_t;
};
template <>
struct CudaType<DataType::kInt8> {
  using type = int8_t;
};
template <>
struct CudaType<DataType::kUint8> {
  using type = uint8_t;
};
template <>
struct CudaType<DataType::kInt16> {
  using type = int16_t;
};
template <>
struct CudaType<DataType::kUint16> {
  using type = uint16_t;
};
template <>
struct CudaType<DataType::kUint32> {
  using type = uint32_t;
};
template <>
struct CudaType<DataType::kUint64> {
  using type = uint64_t;
};
template <>
struct CudaType<DataType::kBool> {
  using type = bool;
};

// Calls fn(T{}) for the T among Ts whose dtype is `dtype`; cudaErrorNotSupported for any other.
template <typename... Ts, typename Fn>
cudaError_t DispatchDtype(DataType dtype, Fn&& fn) {
  cudaError_t result = cudaErrorNotSupported;
  (void)((dtype == DtypeOf<Ts>::value ? (result = fn(Ts{}), true) : false) || ...);
  return result;
}

// DispatchDtype over the device types of a DtypeList.
template <DataType... Ds, typename Fn>
cudaError_t DispatchDtypes(DtypeList<Ds...>, DataType dtype, Fn&& fn) {
  return DispatchDtype<typename CudaType<Ds>::type...>(dtype, fn);
}

// The type arithmetic on T happens in.
template <typename T>
struct ArithOf {
  using type = T;
};
template <>
struct ArithOf<__half> {
  using type = float;
};
template <>
struct ArithOf<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using Arith = typename ArithOf<T>::type;

template <typename T>
__device__ __forceinline__ Arith<T> Load(T value) {
  return value;
}
__device__ __forceinline__ float Load(__half value) { return __half2float(value); }
__device__ __forceinline__ float Load(__nv_bfloat16 value) { return __bfloat162float(value); }

template <typename T>
__device__ __forceinline__ T Store(Arith<T> value) {
  return value;
}
template <>
__device__ __forceinline__ __half Store<__half>(float value) {
  return __float2half_rn(value);
}
template <>
__device__ __forceinline__ __nv_bfloat16 Store<__nv_bfloat16>(float value) {
  return __float2bfloat16_rn(value);
}

// Each operand's element offset for element `linear` of the walk.
template <int kOperands>
__device__ __forceinline__ void StridedOffsets(const StridedIndexer& index, int64_t linear,
                                               int64_t (&offsets)[kOperands]) {
  for (int k = 0; k < kOperands; ++k) offsets[k] = 0;
  for (int d = index.rank - 1; d >= 0; --d) {
    const int64_t dim = index.dims[d];
    const int64_t i = linear % dim;
    linear /= dim;
    for (int k = 0; k < kOperands; ++k) offsets[k] += i * index.strides[k][d];
  }
}

// Threads per block of the element-wise kernels, and a grid for `work` items in grid-stride
// loops: enough blocks to fill an H200 (132 SMs × 2048 threads) several times, no more.
inline constexpr int kBlock = 256;
inline unsigned GridFor(int64_t work) {
  constexpr int64_t kMaxBlocks = 8192;
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min(kMaxBlocks, (work + kBlock - 1) / kBlock)));
}

__device__ __forceinline__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t GridThreads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// kN elements of T, loaded and stored as one access.
template <typename T, int kN>
struct alignas(sizeof(T) * kN) Pack {
  T v[kN];
};

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_DEVICE_TYPES_CUH_
