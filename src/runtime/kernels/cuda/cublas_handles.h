#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUBLAS_HANDLES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUBLAS_HANDLES_H_

#include <cublas_v2.h>

#include <string_view>

#include "zerograph/core/status.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {

// The cuBLAS handle of `stream` (a CUDA stream whose device is current): made on first use and
// bound to the stream with cublasSetStream, then reused by every MatMul and Gemm on it. One per
// (device, stream), because a handle's stream and workspace must not be shared by streams that
// run concurrently. Handles live until the process ends: destroying them at exit could run after
// the CUDA runtime has been torn down.
StatusOr<cublasHandle_t> CublasHandleFor(const Stream& stream);

// OK for CUBLAS_STATUS_SUCCESS; else Unavailable naming `call` and cuBLAS's message.
Status CublasStatus(cublasStatus_t result, std::string_view call);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUBLAS_HANDLES_H_
