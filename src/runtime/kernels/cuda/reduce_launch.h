#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_REDUCE_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_REDUCE_LAUNCH_H_

// The launchers of the reductions and ArgMax/ArgMin (reduce.cu), plain C++ for the host compiler.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/kernels/cuda/strided_indexer.h"
#include "runtime/kernels/reduce_ops.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// y[o] = `op` over r < count of x[base(o) + offset(r)] for o < outputs, where `outputs_index`
// maps o to base(o) and `reduced_index` maps r to offset(r) (operand 0 of each). Accumulators are
// the CPU's (reduce_ops.h). outputs == 0 launches nothing.
cudaError_t LaunchReduce(DataType dtype, ReduceOp op, const void* x, void* y, int64_t outputs,
                         int64_t count, const StridedIndexer& outputs_index,
                         const StridedIndexer& reduced_index, cudaStream_t stream);

// y[o, i] = the index k < n of the largest (`max`) or smallest x[o, k, i], the first of ties or
// the last with `select_last_index`. n >= 1.
cudaError_t LaunchArgReduce(DataType dtype, bool max, bool select_last_index, const void* x,
                            int64_t* y, int64_t outer, int64_t n, int64_t inner,
                            cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_REDUCE_LAUNCH_H_
