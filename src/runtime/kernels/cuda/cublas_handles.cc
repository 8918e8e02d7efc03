#include "runtime/kernels/cuda/cublas_handles.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/device.h"

namespace zerograph::runtime {

Status CublasStatus(cublasStatus_t result, std::string_view call) {
  if (result == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return UnavailableError(
      StrCat(call, " failed: ", cublasGetStatusName(result), ": ", cublasGetStatusString(result)));
}

StatusOr<cublasHandle_t> CublasHandleFor(const Stream& stream) {
  using Key = std::pair<int, cudaStream_t>;
  static std::mutex mutex;
  // Never destroyed (see the header).
  static auto* handles = new std::map<Key, cublasHandle_t>();
  const int ordinal = stream.device().ordinal();
  const auto native = static_cast<cudaStream_t>(stream.native_handle());
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles->find(Key(ordinal, native));
  if (it != handles->end()) return it->second;
  int current = -1;
  const cudaError_t device_result = cudaGetDevice(&current);
  if (device_result != cudaSuccess || current != ordinal) {
    return InternalError(StrCat("a cuBLAS handle for cuda:", ordinal,
                                " was asked for while cuda:", current, " is current"));
  }
  cublasHandle_t handle = nullptr;
  ZG_RETURN_IF_ERROR(CublasStatus(cublasCreate(&handle), "cublasCreate"));
  Status bound = CublasStatus(cublasSetStream(handle, native), "cublasSetStream");
  if (!bound.ok()) {
    cublasDestroy(handle);
    return bound;
  }
  handles->emplace(Key(ordinal, native), handle);
  return handle;
}

}  // namespace zerograph::runtime
