#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_GATHER_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_GATHER_LAUNCH_H_

// Launchers of the indexed CUDA kernels (gather.cu), plain C++ for the kernel classes. Each
// enqueues on `stream` and returns cudaGetLastError(); cudaErrorNotSupported means no code for
// the element size or dtype. n == 0 launches nothing.
//
// The indexed walk: element i of a row-major walk over `walk.dims` reads (gathers) or writes
// (scatters) data element base(i) + k·axis_stride, where base(i) is i's offset in operand 0 and
// k = indices[offset of i in operand 1], negative counting from the back of `axis_dim`. An index
// outside [-axis_dim, axis_dim) sets *bad_index (device memory) to 1 and moves nothing.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/kernels/cuda/strided_indexer.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

struct IndexedWalk {
  StridedIndexer walk;
  const void* indices = nullptr;
  bool indices_int32 = false;
  int64_t axis_dim = 0;
  int64_t axis_stride = 0;
  int* bad_index = nullptr;
};

// y[i] = x[base(i) + k·axis_stride], elements of `element_size` bytes: Gather, GatherElements.
cudaError_t LaunchIndexedGather(size_t element_size, const void* x, void* y, int64_t n,
                                const IndexedWalk& walk, cudaStream_t stream);

// How a scattered update combines with the element it lands on.
enum class ScatterOp { kStore, kAdd, kMul, kMax, kMin };

// y[base(i) + k·axis_stride] = updates[i], or combined with it atomically (add, mul, max, min:
// fp32, fp64, fp16, bf16, int32, int64; plain stores take any element size): ScatterElements,
// GatherGrad.
cudaError_t LaunchIndexedScatter(DataType dtype, ScatterOp op, const void* updates, void* y,
                                 int64_t n, const IndexedWalk& walk, cudaStream_t stream);

// Trilu over `matrices` matrices of rows × cols: y keeps x where j - i >= k (upper) or
// j - i <= k, else 0.
cudaError_t LaunchTrilu(size_t element_size, const void* x, void* y, int64_t matrices, int64_t rows,
                        int64_t cols, int64_t k, bool upper, cudaStream_t stream);

// n elements of `element_size` bytes, each the low bytes of `pattern`.
cudaError_t LaunchFill(size_t element_size, void* y, uint64_t pattern, int64_t n,
                       cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_GATHER_LAUNCH_H_
