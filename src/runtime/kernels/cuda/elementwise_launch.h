#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_ELEMENTWISE_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_ELEMENTWISE_LAUNCH_H_

// Launchers of the element-wise CUDA kernels (elementwise.cu), plain C++ so the kernel classes
// compile with the host compiler. Each enqueues on `stream` and returns cudaGetLastError();
// cudaErrorNotSupported means no code for the dtype (the registration and these lists disagree).
// n == 0 launches nothing.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/kernels/cuda/strided_indexer.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// out[i] = op(a[i], b[i]) over n outputs, or with `broadcast` (operands 0 = a, 1 = b) each
// operand's element for output i; `op` is the op's index in elementwise::BinaryOps
// (elementwise::IndexOf), `dtype` one of its Types. Comparisons write bool; the rest `dtype`.
cudaError_t LaunchBinary(size_t op, DataType dtype, const void* a, const void* b, void* out,
                         int64_t n, const StridedIndexer* broadcast, cudaStream_t stream);

// y[i] = op(x[i]), `op` the op's index in elementwise::UnaryOps.
cudaError_t LaunchUnary(size_t op, DataType dtype, const void* x, void* y, int64_t n,
                        cudaStream_t stream);

// y[i] = x[i] converted from `from` to `to` as the CPU's Cast converts (16-bit floats through
// fp32, round to nearest even; integers truncated; nonzero is true).
cudaError_t LaunchCast(DataType from, DataType to, const void* x, void* y, int64_t n,
                       cudaStream_t stream);

// y[i] = x[offset of i in operand 0] for elements of `element_size` bytes (1, 2, 4 or 8):
// Transpose.
cudaError_t LaunchGather(size_t element_size, const void* x, void* y, int64_t n,
                         const StridedIndexer& index, cudaStream_t stream);

// y[i] = beta · c[offset of i in operand 0], in `dtype` (a float dtype; fp32 arithmetic for the
// 16-bit ones): Gemm's C term.
cudaError_t LaunchScaledGather(DataType dtype, double beta, const void* c, void* y, int64_t n,
                               const StridedIndexer& index, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_ELEMENTWISE_LAUNCH_H_
