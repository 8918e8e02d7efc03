#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_REDUCE_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_REDUCE_LAUNCH_H_

// The launcher of ReduceSum / ReduceMean (reduce.cu), plain C++ for the host compiler.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/kernels/cuda/strided_indexer.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// y[o] = Σ_r x[base(o) + offset(r)] (÷ count with `mean`) for o < outputs, r < count, where
// `outputs_index` maps o to base(o) and `reduced_index` maps r to offset(r) (operand 0 of each).
// Sums accumulate in double (int64 for integers), as the CPU's do. outputs == 0 launches nothing.
cudaError_t LaunchReduce(DataType dtype, bool mean, const void* x, void* y, int64_t outputs,
                         int64_t count, const StridedIndexer& outputs_index,
                         const StridedIndexer& reduced_index, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_REDUCE_LAUNCH_H_
