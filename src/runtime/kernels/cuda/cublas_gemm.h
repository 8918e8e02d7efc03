#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUBLAS_GEMM_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUBLAS_GEMM_H_

// One cuBLAS GEMM (batched when batch > 1), shared by MatMul, Gemm and FusedMatMul. fp32 computes
// in fp32 (never TF32), fp64 in fp64, fp16 and bf16 in fp32.

#include <cublas_v2.h>

#include <cstdint>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime {

// Column-major C[m,n] = alpha·op(A)·op(B) + beta·C for `batch` matrices `stride_*` elements
// apart (0: the same matrix for every batch).
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch = 1;
};

Status RunGemm(cublasHandle_t handle, DataType dtype, double alpha, double beta, const GemmCall& g);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_CUBLAS_GEMM_H_
