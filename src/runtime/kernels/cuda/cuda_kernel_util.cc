#include "runtime/kernels/cuda/cuda_kernel_util.h"

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {

Status CudaLaunchStatus(cudaError_t result, std::string_view what) {
  if (result == cudaSuccess) return Status::Ok();
  if (result == cudaErrorNotSupported) {
    return InternalError(StrCat(what, ": no CUDA code for these dtypes (the registration and ",
                                "the launcher disagree)"));
  }
  return UnavailableError(
      StrCat(what, " failed: ", cudaGetErrorName(result), ": ", cudaGetErrorString(result)));
}

Status CudaMemory::CopyBytes(const void* src, void* dst, size_t bytes, const KernelContext& ctx) {
  if (src == dst || bytes == 0) return Status::Ok();
  return CudaLaunchStatus(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, NativeStream(ctx)),
      "cudaMemcpyAsync (device to device)");
}

Status CudaMemory::Zero(void* dst, size_t bytes, const KernelContext& ctx) {
  if (bytes == 0) return Status::Ok();
  return CudaLaunchStatus(cudaMemsetAsync(dst, 0, bytes, NativeStream(ctx)), "cudaMemsetAsync");
}

Status CudaMemory::CopyFromHost(const void* src, void* dst, size_t bytes,
                                const KernelContext& ctx) {
  // From pageable memory the call returns once the bytes are staged, in stream order.
  return CudaLaunchStatus(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, NativeStream(ctx)),
      "cudaMemcpyAsync (host to device)");
}

StatusOr<cuda::StridedIndexer> MakeStridedIndexer(std::span<const int64_t> dims,
                                                  std::span<const Shape> strides) {
  cuda::StridedIndexer index;
  if (dims.size() > static_cast<size_t>(cuda::StridedIndexer::kMaxDims) ||
      strides.size() > static_cast<size_t>(cuda::StridedIndexer::kMaxOperands)) {
    return UnimplementedError(StrCat("a strided walk over ", dims.size(), " dimensions and ",
                                     strides.size(), " operands exceeds the CUDA kernels' ",
                                     cuda::StridedIndexer::kMaxDims, " and ",
                                     cuda::StridedIndexer::kMaxOperands));
  }
  index.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    index.dims[d] = dims[d];
    for (size_t k = 0; k < strides.size(); ++k) index.strides[k][d] = strides[k][d];
  }
  return index;
}

}  // namespace zerograph::runtime
