// Element-wise CUDA kernels: the binary ops of elementwise_ops.h with broadcasting, its unary ops
// (the functors the CPU loops call too), Cast, the strided gather of Transpose and Gemm's scaled C.
// Same-shape binary and unary ops load 16 bytes at a time when every pointer allows it.

#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/elementwise_ops.h"

namespace zerograph::runtime::cuda {
namespace {

template <typename Out, typename T, typename V>
__device__ __forceinline__ Out StoreAs(V value) {
  if constexpr (std::is_same_v<Out, bool>) {
    return static_cast<bool>(value);
  } else {
    return Store<T>(value);
  }
}

// Same shapes, kVec elements per access (pointers aligned to it; the tail one at a time).
template <typename Op, typename T, typename Out, int kVec>
__global__ void BinaryContiguousKernel(const T* a, const T* b, Out* out, int64_t n) {
  const int64_t packs = n / kVec;
  for (int64_t p = GlobalThread(); p < packs; p += GridThreads()) {
    const Pack<T, kVec> va = reinterpret_cast<const Pack<T, kVec>*>(a)[p];
    const Pack<T, kVec> vb = reinterpret_cast<const Pack<T, kVec>*>(b)[p];
    Pack<Out, kVec> vo;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      vo.v[j] = StoreAs<Out, T>(Op::Apply(Load(va.v[j]), Load(vb.v[j])));
    }
    reinterpret_cast<Pack<Out, kVec>*>(out)[p] = vo;
  }
  for (int64_t i = packs * kVec + GlobalThread(); i < n; i += GridThreads()) {
    out[i] = StoreAs<Out, T>(Op::Apply(Load(a[i]), Load(b[i])));
  }
}

template <typename Op, typename T, typename Out>
__global__ void BinaryBroadcastKernel(const T* a, const T* b, Out* out, int64_t n,
                                      StridedIndexer index) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    int64_t offsets[2];
    StridedOffsets<2>(index, i, offsets);
    out[i] = StoreAs<Out, T>(Op::Apply(Load(a[offsets[0]]), Load(b[offsets[1]])));
  }
}

// Elements per 16-byte access, when every pointer is aligned to it.
template <typename T>
int VectorWidth(std::initializer_list<std::pair<const void*, size_t>> pointers) {
  constexpr int kWidth = static_cast<int>(16 / sizeof(T));
  for (const auto& [pointer, element_size] : pointers) {
    if (reinterpret_cast<uintptr_t>(pointer) % (element_size * kWidth) != 0) return 1;
  }
  return kWidth;
}

template <typename Op, typename T, typename Out>
cudaError_t RunBinary(const void* a, const void* b, void* out, int64_t n,
                      const StridedIndexer* broadcast, cudaStream_t stream) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  Out* po = static_cast<Out*>(out);
  constexpr int kWidth = static_cast<int>(16 / sizeof(T));
  if (broadcast != nullptr) {
    BinaryBroadcastKernel<Op, T, Out><<<GridFor(n), kBlock, 0, stream>>>(pa, pb, po, n, *broadcast);
  } else if (VectorWidth<T>({{a, sizeof(T)}, {b, sizeof(T)}, {out, sizeof(Out)}}) == kWidth) {
    BinaryContiguousKernel<Op, T, Out, kWidth>
        <<<GridFor(n / kWidth + 1), kBlock, 0, stream>>>(pa, pb, po, n);
  } else {
    BinaryContiguousKernel<Op, T, Out, 1><<<GridFor(n), kBlock, 0, stream>>>(pa, pb, po, n);
  }
  return cudaGetLastError();
}

template <typename Op, typename T, int kVec>
__global__ void UnaryContiguousKernel(const T* x, T* y, int64_t n) {
  const int64_t packs = n / kVec;
  for (int64_t p = GlobalThread(); p < packs; p += GridThreads()) {
    const Pack<T, kVec> vx = reinterpret_cast<const Pack<T, kVec>*>(x)[p];
    Pack<T, kVec> vy;
#pragma unroll
    for (int j = 0; j < kVec; ++j) vy.v[j] = Store<T>(Op::Apply(Load(vx.v[j])));
    reinterpret_cast<Pack<T, kVec>*>(y)[p] = vy;
  }
  for (int64_t i = packs * kVec + GlobalThread(); i < n; i += GridThreads()) {
    y[i] = Store<T>(Op::Apply(Load(x[i])));
  }
}

template <typename Op, typename T>
cudaError_t RunUnary(const void* x, void* y, int64_t n, cudaStream_t stream) {
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  constexpr int kWidth = static_cast<int>(16 / sizeof(T));
  if (VectorWidth<T>({{x, sizeof(T)}, {y, sizeof(T)}}) == kWidth) {
    UnaryContiguousKernel<Op, T, kWidth><<<GridFor(n / kWidth + 1), kBlock, 0, stream>>>(px, py, n);
  } else {
    UnaryContiguousKernel<Op, T, 1><<<GridFor(n), kBlock, 0, stream>>>(px, py, n);
  }
  return cudaGetLastError();
}

template <typename T>
inline constexpr bool kIsNarrowFloat =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// The CPU's Convert (kernels/cpu/cast.cc), step for step.
template <typename D, typename S>
__device__ __forceinline__ D Convert(S value) {
  if constexpr (std::is_same_v<D, S>) {
    return value;
  } else if constexpr (kIsNarrowFloat<S>) {
    return Convert<D>(Load(value));
  } else if constexpr (std::is_same_v<D, bool>) {
    return value != S(0);
  } else if constexpr (kIsNarrowFloat<D>) {
    return Store<D>(static_cast<float>(value));
  } else {
    return static_cast<D>(value);
  }
}

template <typename S, typename D>
__global__ void CastKernel(const S* x, D* y, int64_t n) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) y[i] = Convert<D>(x[i]);
}

template <typename Word>
__global__ void GatherKernel(const Word* x, Word* y, int64_t n, StridedIndexer index) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    int64_t offsets[1];
    StridedOffsets<1>(index, i, offsets);
    y[i] = x[offsets[0]];
  }
}

template <typename T>
__global__ void ScaledGatherKernel(Arith<T> beta, const T* c, T* y, int64_t n,
                                   StridedIndexer index) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    int64_t offsets[1];
    StridedOffsets<1>(index, i, offsets);
    y[i] = Store<T>(beta * Load(c[offsets[0]]));
  }
}

// Op on the device type of `dtype`, one of Op's Types.
template <typename Op>
cudaError_t DispatchBinary(DataType dtype, const void* a, const void* b, void* out, int64_t n,
                           const StridedIndexer* broadcast, cudaStream_t stream) {
  return DispatchDtypes(typename Op::Types{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    using Out = std::conditional_t<Op::kBoolOutput, bool, T>;
    return RunBinary<Op, T, Out>(a, b, out, n, broadcast, stream);
  });
}

template <typename Op>
cudaError_t DispatchUnary(DataType dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return DispatchDtypes(typename Op::Types{}, dtype,
                        [&](auto tag) { return RunUnary<Op, decltype(tag)>(x, y, n, stream); });
}

// Runs launch(Op{}) for the op at `index` of the list.
template <typename... Ops, typename Launch>
cudaError_t ForOpAt(elementwise::OpList<Ops...>, size_t index, Launch&& launch) {
  cudaError_t result = cudaErrorNotSupported;
  size_t i = 0;
  (void)((i++ == index ? (result = launch(Ops{}), true) : false) || ...);
  return result;
}

}  // namespace

cudaError_t LaunchBinary(size_t op, DataType dtype, const void* a, const void* b, void* out,
                         int64_t n, const StridedIndexer* broadcast, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return ForOpAt(elementwise::BinaryOps{}, op, [&](auto tag) {
    using Op = decltype(tag);
    return DispatchBinary<Op>(dtype, a, b, out, n, broadcast, stream);
  });
}

cudaError_t LaunchUnary(size_t op, DataType dtype, const void* x, void* y, int64_t n,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return ForOpAt(elementwise::UnaryOps{}, op, [&](auto tag) {
    using Op = decltype(tag);
    return DispatchUnary<Op>(dtype, x, y, n, stream);
  });
}

cudaError_t LaunchCast(DataType from, DataType to, const void* x, void* y, int64_t n,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(CastDtypes{}, from, [&](auto source) {
    return DispatchDtypes(CastDtypes{}, to, [&](auto target) {
      using S = decltype(source);
      using D = decltype(target);
      CastKernel<S, D>
          <<<GridFor(n), kBlock, 0, stream>>>(static_cast<const S*>(x), static_cast<D*>(y), n);
      return cudaGetLastError();
    });
  });
}

cudaError_t LaunchGather(size_t element_size, const void* x, void* y, int64_t n,
                         const StridedIndexer& index, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  auto run = [&](auto word) {
    using Word = decltype(word);
    GatherKernel<Word><<<GridFor(n), kBlock, 0, stream>>>(static_cast<const Word*>(x),
                                                          static_cast<Word*>(y), n, index);
    return cudaGetLastError();
  };
  switch (element_size) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    case 8:
      return run(uint64_t{});
    default:
      return cudaErrorNotSupported;
  }
}

cudaError_t LaunchScaledGather(DataType dtype, double beta, const void* c, void* y, int64_t n,
                               const StridedIndexer& index, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    ScaledGatherKernel<T><<<GridFor(n), kBlock, 0, stream>>>(
        static_cast<Arith<T>>(beta), static_cast<const T*>(c), static_cast<T*>(y), n, index);
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
