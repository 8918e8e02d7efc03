#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_UTIL_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_UTIL_H_

// What the CUDA kernel classes share: the stream to launch on, launch errors as a Status, the
// memory policy of the shared data-movement kernels, and strided indexers from broadcast plans.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/strided_indexer.h"
#include "zerograph/core/status.h"
#include "zerograph/runtime/kernel.h"

namespace zerograph::runtime {

// The cudaStream_t of the stream the kernel runs on.
inline cudaStream_t NativeStream(const KernelContext& ctx) {
  return static_cast<cudaStream_t>(ctx.stream->native_handle());
}

// OK for cudaSuccess; else Unavailable naming `what` (the kernel or call) and CUDA's message. The
// node is added by OpKernel::Compute.
Status CudaLaunchStatus(cudaError_t result, std::string_view what);

// The memory policy of the data-movement kernels (kernels/shape_ops.h, fused_buffers.h) on a GPU:
// copies and fills enqueued on the kernel's stream.
struct CudaMemory {
  // Copies `bytes` of device memory unless `src` and `dst` are the same (an output the executor
  // made a view of its input).
  static Status CopyBytes(const void* src, void* dst, size_t bytes, const KernelContext& ctx);
  static Status Zero(void* dst, size_t bytes, const KernelContext& ctx);
  // From host memory the kernel holds (a constant) into device memory.
  static Status CopyFromHost(const void* src, void* dst, size_t bytes, const KernelContext& ctx);
};

// A kernel parameter from `dims` (row-major, collapsed) and each operand's strides;
// Unimplemented beyond StridedIndexer::kMaxDims dimensions.
StatusOr<cuda::StridedIndexer> MakeStridedIndexer(std::span<const int64_t> dims,
                                                  std::span<const Shape> strides);
inline StatusOr<cuda::StridedIndexer> MakeStridedIndexer(const BroadcastPlan& plan) {
  return MakeStridedIndexer(plan.dims, plan.strides);
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_UTIL_H_
