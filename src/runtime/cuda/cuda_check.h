#ifndef ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_CHECK_H_
#define ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_CHECK_H_

#include <cuda_runtime.h>
#include <nccl.h>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"

// One check for CUDA and NCCL calls: a failure returns Unavailable naming `where` (the device, or
// the rank and device), the call's text, the library's message and file:line.

namespace zerograph::runtime {

#define ZG_GPU_CHECK_GEN_(where, call, type, success, error_string)                            \
  do {                                                                                         \
    const type zg_gpu_result_ = (call);                                                        \
    if (zg_gpu_result_ != (success)) {                                                         \
      return ::zerograph::UnavailableError(                                                    \
          ::zerograph::StrCat((where), ": ", #call, " failed: ", error_string(zg_gpu_result_), \
                              " (", __FILE__, ":", __LINE__, ")"));                            \
    }                                                                                          \
  } while (false)

#define ZG_CUDA_CHECK(where, call) \
  ZG_GPU_CHECK_GEN_(where, call, cudaError_t, cudaSuccess, cudaGetErrorString)
#define ZG_NCCL_CHECK(where, call) \
  ZG_GPU_CHECK_GEN_(where, call, ncclResult_t, ncclSuccess, ncclGetErrorString)

// The same as a Status, for calls whose failure is recorded rather than returned.
inline Status CudaStatus(cudaError_t result, std::string_view where, std::string_view call) {
  if (result == cudaSuccess) return Status::Ok();
  return UnavailableError(StrCat(where, ": ", call, " failed: ", cudaGetErrorString(result)));
}

// Makes GPU `ordinal` current on the calling thread (a no-op when it is): every entry point of
// the backend calls it, since any thread may free a buffer or wait for a stream.
inline Status MakeDeviceCurrent(int ordinal) {
  int current = -1;
  ZG_CUDA_CHECK(StrCat("cuda:", ordinal), cudaGetDevice(&current));
  if (current != ordinal) ZG_CUDA_CHECK(StrCat("cuda:", ordinal), cudaSetDevice(ordinal));
  return Status::Ok();
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_CHECK_H_
