// The indexed CUDA kernels behind gather_launch.h: grid-stride loops, elements moved as words of
// their size; scatter-add through atomicAdd, mul, max and min through compare-and-swap.

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/gather_launch.h"

namespace zerograph::runtime::cuda {
namespace {

// The data offset element i of the walk touches, or -1 for an index out of range (flagged).
__device__ __forceinline__ int64_t IndexedOffset(const IndexedWalk& walk, int64_t i) {
  int64_t offsets[2];
  StridedOffsets<2>(walk.walk, i, offsets);
  int64_t k = walk.indices_int32 ? static_cast<const int32_t*>(walk.indices)[offsets[1]]
                                 : static_cast<const int64_t*>(walk.indices)[offsets[1]];
  if (k < 0) k += walk.axis_dim;
  if (k < 0 || k >= walk.axis_dim) {
    *walk.bad_index = 1;
    return -1;
  }
  return offsets[0] + k * walk.axis_stride;
}

template <typename Word>
__global__ void IndexedGatherKernel(const Word* x, Word* y, int64_t n, IndexedWalk walk) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const int64_t at = IndexedOffset(walk, i);
    y[i] = at < 0 ? Word(0) : x[at];
  }
}

template <typename Word>
__global__ void IndexedStoreKernel(const Word* updates, Word* y, int64_t n, IndexedWalk walk) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const int64_t at = IndexedOffset(walk, i);
    if (at >= 0) y[at] = updates[i];
  }
}

__device__ __forceinline__ void AtomicAdd(float* at, float v) { atomicAdd(at, v); }
__device__ __forceinline__ void AtomicAdd(double* at, double v) { atomicAdd(at, v); }
__device__ __forceinline__ void AtomicAdd(__half* at, __half v) { atomicAdd(at, v); }
__device__ __forceinline__ void AtomicAdd(__nv_bfloat16* at, __nv_bfloat16 v) { atomicAdd(at, v); }
__device__ __forceinline__ void AtomicAdd(int32_t* at, int32_t v) { atomicAdd(at, v); }
__device__ __forceinline__ void AtomicAdd(int64_t* at, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(v));
}

// The unsigned integer atomicCAS takes for a T.
template <size_t kSize>
struct CasWord;
template <>
struct CasWord<2> {
  using type = unsigned short;
};
template <>
struct CasWord<4> {
  using type = unsigned int;
};
template <>
struct CasWord<8> {
  using type = unsigned long long;
};

// *at = combine(*at, v) atomically, by compare-and-swap (mul, max, min).
template <typename T, typename Combine>
__device__ void AtomicCombine(T* at, T v, Combine combine) {
  using Word = typename CasWord<sizeof(T)>::type;
  Word* word = reinterpret_cast<Word*>(at);
  Word old = *word;
  Word assumed;
  do {
    assumed = old;
    T current;
    memcpy(&current, &assumed, sizeof(T));
    const T next = Store<T>(combine(Load(current), Load(v)));
    Word next_word;
    memcpy(&next_word, &next, sizeof(T));
    old = atomicCAS(word, assumed, next_word);
  } while (old != assumed);
}

template <typename T>
__global__ void IndexedCombineKernel(const T* updates, T* y, int64_t n, IndexedWalk walk,
                                     ScatterOp op) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const int64_t at = IndexedOffset(walk, i);
    if (at < 0) continue;
    switch (op) {
      case ScatterOp::kAdd:
        AtomicAdd(y + at, updates[i]);
        break;
      case ScatterOp::kMul:
        AtomicCombine(y + at, updates[i], [](Arith<T> a, Arith<T> b) { return a * b; });
        break;
      case ScatterOp::kMax:
        AtomicCombine(y + at, updates[i], [](Arith<T> a, Arith<T> b) { return a < b ? b : a; });
        break;
      default:
        AtomicCombine(y + at, updates[i], [](Arith<T> a, Arith<T> b) { return b < a ? b : a; });
        break;
    }
  }
}

template <typename Word>
__global__ void TriluKernel(const Word* x, Word* y, int64_t n, int64_t rows, int64_t cols,
                            int64_t k, bool upper) {
  for (int64_t e = GlobalThread(); e < n; e += GridThreads()) {
    const int64_t j = e % cols;
    const int64_t i = (e / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    y[e] = keep ? x[e] : Word(0);
  }
}

template <typename Word>
__global__ void FillKernel(Word* y, Word value, int64_t n) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) y[i] = value;
}

// Calls run(Word{}) for the unsigned word of `size` bytes.
template <typename Run>
cudaError_t ByWord(size_t size, Run&& run) {
  switch (size) {
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

}  // namespace

cudaError_t LaunchIndexedGather(size_t element_size, const void* x, void* y, int64_t n,
                                const IndexedWalk& walk, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return ByWord(element_size, [&](auto word) {
    using Word = decltype(word);
    IndexedGatherKernel<Word><<<GridFor(n), kBlock, 0, stream>>>(static_cast<const Word*>(x),
                                                                 static_cast<Word*>(y), n, walk);
    return cudaGetLastError();
  });
}

cudaError_t LaunchIndexedScatter(DataType dtype, ScatterOp op, const void* updates, void* y,
                                 int64_t n, const IndexedWalk& walk, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (op == ScatterOp::kStore) {
    return ByWord(ElementSize(dtype), [&](auto word) {
      using Word = decltype(word);
      IndexedStoreKernel<Word><<<GridFor(n), kBlock, 0, stream>>>(static_cast<const Word*>(updates),
                                                                  static_cast<Word*>(y), n, walk);
      return cudaGetLastError();
    });
  }
  return DispatchDtype<float, double, __half, __nv_bfloat16, int32_t, int64_t>(
      dtype, [&](auto tag) {
        using T = decltype(tag);
        IndexedCombineKernel<T><<<GridFor(n), kBlock, 0, stream>>>(static_cast<const T*>(updates),
                                                                   static_cast<T*>(y), n, walk, op);
        return cudaGetLastError();
      });
}

cudaError_t LaunchTrilu(size_t element_size, const void* x, void* y, int64_t matrices, int64_t rows,
                        int64_t cols, int64_t k, bool upper, cudaStream_t stream) {
  const int64_t n = matrices * rows * cols;
  if (n == 0) return cudaSuccess;
  return ByWord(element_size, [&](auto word) {
    using Word = decltype(word);
    TriluKernel<Word><<<GridFor(n), kBlock, 0, stream>>>(
        static_cast<const Word*>(x), static_cast<Word*>(y), n, rows, cols, k, upper);
    return cudaGetLastError();
  });
}

cudaError_t LaunchFill(size_t element_size, void* y, uint64_t pattern, int64_t n,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return ByWord(element_size, [&](auto word) {
    using Word = decltype(word);
    FillKernel<Word>
        <<<GridFor(n), kBlock, 0, stream>>>(static_cast<Word*>(y), static_cast<Word>(pattern), n);
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
