// CUDA kernels of the element-wise ops outside the tables: the functors of elementwise_attr_ops.h
// (the CPU loops call them too) and ONNX Runtime's BiasGeluGrad_dX and DivGrad. Grid-stride loops,
// one element per thread and step; broadcast operands through a StridedIndexer.

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/elementwise_attr_launch.h"
#include "runtime/kernels/elementwise_attr_ops.h"

namespace zerograph::runtime::cuda {
namespace {

namespace ew = elementwise;

template <typename T, typename Fn>
__global__ void MapKernel(const T* x, T* y, int64_t n, Fn fn) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) y[i] = Store<T>(fn(Load(x[i])));
}

// out[i] = fn(a, b) at each operand's element for output i; `fn` returns the stored element.
template <typename TA, typename TB, typename Out, typename Fn>
__global__ void BinaryFnKernel(const TA* a, const TB* b, Out* out, int64_t n, StridedIndexer index,
                               bool broadcast, Fn fn) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    int64_t offsets[2] = {i, i};
    if (broadcast) StridedOffsets<2>(index, i, offsets);
    out[i] = fn(Load(a[offsets[0]]), Load(b[offsets[1]]));
  }
}

template <typename TA, typename TB, typename Out, typename Fn>
cudaError_t RunBinaryFn(const void* a, const void* b, void* out, int64_t n,
                        const StridedIndexer* broadcast, cudaStream_t stream, Fn fn) {
  BinaryFnKernel<TA, TB, Out, Fn><<<GridFor(n), kBlock, 0, stream>>>(
      static_cast<const TA*>(a), static_cast<const TB*>(b), static_cast<Out*>(out), n,
      broadcast != nullptr ? *broadcast : StridedIndexer{}, broadcast != nullptr, fn);
  return cudaGetLastError();
}

template <typename T, typename Step>
struct StepStore {
  __device__ T operator()(Arith<T> a, Arith<T> b) const { return Store<T>(Step::Apply(a, b)); }
};
template <typename T, typename E>
struct PowStore {
  __device__ T operator()(Arith<T> a, Arith<E> b) const { return Store<T>(ew::PowOf(a, b)); }
};
template <typename T, template <typename> class Fn>
struct ModStore {
  __device__ T operator()(Arith<T> a, Arith<T> b) const { return Store<T>(Fn<Arith<T>>{}(a, b)); }
};

template <typename Word>
__global__ void WhereKernel(const bool* condition, const Word* x, const Word* y, Word* out,
                            int64_t n, StridedIndexer index, bool broadcast) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    int64_t offsets[3] = {i, i, i};
    if (broadcast) StridedOffsets<3>(index, i, offsets);
    out[i] = condition[offsets[0]] ? x[offsets[1]] : y[offsets[2]];
  }
}

template <typename T>
__global__ void BiasGeluGradKernel(const T* dy, const T* x, const T* b, T* dx, int64_t n,
                                   int64_t width) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const Arith<T> v = Load(x[i]) + Load(b[i % width]);
    dx[i] = Store<T>(Load(dy[i]) * ew::GeluMath::ExactDerivative(v));
  }
}

// dA[j] = Σ dY/B, dB[j] = Σ -dY·A/B² over the dY elements that broadcast from j.
template <typename T, bool kOfA>
__global__ void DivGradKernel(const T* dy, const T* other, const T* self, T* grad, int64_t n,
                              StridedIndexer kept, StridedIndexer reduced, int64_t count) {
  using A = Arith<T>;
  for (int64_t j = GlobalThread(); j < n; j += GridThreads()) {
    int64_t base[2];
    StridedOffsets<2>(kept, j, base);
    A sum = A(0);
    for (int64_t r = 0; r < count; ++r) {
      int64_t step[2];
      StridedOffsets<2>(reduced, r, step);
      const A g = Load(dy[base[0] + step[0]]);
      const A o = Load(other[base[1] + step[1]]);
      if constexpr (kOfA) {
        sum += g / o;
      } else {
        const A b = Load(self[j]);
        sum -= g / b * o / b;
      }
    }
    grad[j] = Store<T>(sum);
  }
}

// The value of one element of T at host pointer `p`, in T's arithmetic type.
template <typename T>
Arith<T> HostLoad(const void* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(value);
  } else {
    return value;
  }
}

// The widest bound of A: infinity for floats, so that an absent bound lets infinities through.
template <typename A>
A Unbounded(bool upper) {
  if constexpr (std::numeric_limits<A>::has_infinity) {
    return upper ? std::numeric_limits<A>::infinity() : -std::numeric_limits<A>::infinity();
  } else {
    return upper ? std::numeric_limits<A>::max() : std::numeric_limits<A>::lowest();
  }
}

template <typename T, typename Fn>
cudaError_t RunMap(const void* x, void* y, int64_t n, cudaStream_t stream, Fn fn) {
  MapKernel<T, Fn>
      <<<GridFor(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, fn);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchMap(MapOp op, DataType dtype, double p0, double p1, const void* x, void* y,
                      int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = Arith<T>;
    switch (op) {
      case MapOp::kLeakyRelu:
        return RunMap<T>(x, y, n, stream, ew::LeakyReluFn<A>{static_cast<A>(p0)});
      case MapOp::kClip:
        return RunMap<T>(x, y, n, stream, ew::ClipFn<A>{static_cast<A>(p0), static_cast<A>(p1)});
      case MapOp::kGeluExact:
        return RunMap<T>(x, y, n, stream, ew::GeluExactFn<A>{});
      case MapOp::kGeluTanh:
        return RunMap<T>(x, y, n, stream, ew::GeluTanhFn<A>{});
      case MapOp::kScale:
        return RunMap<T>(x, y, n, stream, ew::ScaleFn<A>{static_cast<A>(p0)});
    }
    return cudaErrorNotSupported;
  });
}

cudaError_t LaunchClip(DataType dtype, const void* lo, const void* hi, const void* x, void* y,
                       int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(AllNumericDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = Arith<T>;
    const ew::ClipFn<A> clip{lo != nullptr ? HostLoad<T>(lo) : Unbounded<A>(false),
                             hi != nullptr ? HostLoad<T>(hi) : Unbounded<A>(true)};
    return RunMap<T>(x, y, n, stream, clip);
  });
}

cudaError_t LaunchVariadicStep(size_t step, DataType dtype, const void* a, const void* b, void* out,
                               int64_t n, const StridedIndexer* broadcast, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(AllNumericDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (step) {
      case ew::IndexOf<ew::Add>(ew::VariadicSteps{}):
        return RunBinaryFn<T, T, T>(a, b, out, n, broadcast, stream, StepStore<T, ew::Add>{});
      case ew::IndexOf<ew::MaxOf>(ew::VariadicSteps{}):
        return RunBinaryFn<T, T, T>(a, b, out, n, broadcast, stream, StepStore<T, ew::MaxOf>{});
      case ew::IndexOf<ew::MinOf>(ew::VariadicSteps{}):
        return RunBinaryFn<T, T, T>(a, b, out, n, broadcast, stream, StepStore<T, ew::MinOf>{});
      default:
        return cudaErrorNotSupported;
    }
  });
}

cudaError_t LaunchPow(DataType base, DataType exponent, const void* a, const void* b, void* out,
                      int64_t n, const StridedIndexer* broadcast, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(NumericDtypes{}, base, [&](auto base_tag) {
    return DispatchDtypes(AllNumericDtypes{}, exponent, [&](auto exponent_tag) {
      using T = decltype(base_tag);
      using E = decltype(exponent_tag);
      return RunBinaryFn<T, E, T>(a, b, out, n, broadcast, stream, PowStore<T, E>{});
    });
  });
}

cudaError_t LaunchMod(DataType dtype, bool fmod, const void* a, const void* b, void* out, int64_t n,
                      const StridedIndexer* broadcast, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(AllNumericDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (fmod) {
      return RunBinaryFn<T, T, T>(a, b, out, n, broadcast, stream,
                                  ModStore<T, ew::TruncatedModFn>{});
    }
    return RunBinaryFn<T, T, T>(a, b, out, n, broadcast, stream, ModStore<T, ew::FlooredModFn>{});
  });
}

cudaError_t LaunchWhere(size_t element_size, const bool* condition, const void* x, const void* y,
                        void* out, int64_t n, const StridedIndexer* broadcast,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  auto run = [&](auto word) {
    using Word = decltype(word);
    WhereKernel<Word><<<GridFor(n), kBlock, 0, stream>>>(
        condition, static_cast<const Word*>(x), static_cast<const Word*>(y),
        static_cast<Word*>(out), n, broadcast != nullptr ? *broadcast : StridedIndexer{},
        broadcast != nullptr);
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

cudaError_t LaunchBiasGeluGrad(DataType dtype, const void* dy, const void* x, const void* b,
                               void* dx, int64_t n, int64_t width, cudaStream_t stream) {
  if (n == 0 || width == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    BiasGeluGradKernel<T><<<GridFor(n), kBlock, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(b),
        static_cast<T*>(dx), n, width);
    return cudaGetLastError();
  });
}

cudaError_t LaunchDivGrad(DataType dtype, bool of_a, const void* dy, const void* other,
                          const void* self, void* grad, int64_t n, const StridedIndexer& kept,
                          const StridedIndexer& reduced, int64_t count, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* pdy = static_cast<const T*>(dy);
    const T* po = static_cast<const T*>(other);
    const T* ps = static_cast<const T*>(self);
    T* pg = static_cast<T*>(grad);
    if (of_a) {
      DivGradKernel<T, true>
          <<<GridFor(n), kBlock, 0, stream>>>(pdy, po, ps, pg, n, kept, reduced, count);
    } else {
      DivGradKernel<T, false>
          <<<GridFor(n), kBlock, 0, stream>>>(pdy, po, ps, pg, n, kept, reduced, count);
    }
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
