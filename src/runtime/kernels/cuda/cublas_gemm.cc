#include "runtime/kernels/cuda/cublas_gemm.h"

#include "runtime/kernels/cuda/cublas_handles.h"
#include "runtime/kernels/matmul_shapes.h"

namespace zerograph::runtime {
namespace {

// cuBLAS's data and compute types for a dtype, with alpha and beta stored as the compute type.
struct CublasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool fp64;
};

CublasTypes TypesOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case DataType::kFloat16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case DataType::kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    default:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
  }
}

}  // namespace

Status RunGemm(cublasHandle_t handle, DataType dtype, double alpha, double beta,
               const GemmCall& g) {
  const CublasTypes types = TypesOf(dtype);
  const float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  const void* alpha_ptr = types.fp64 ? static_cast<const void*>(&alpha) : &alpha32;
  const void* beta_ptr = types.fp64 ? static_cast<const void*>(&beta) : &beta32;
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  ZG_RETURN_IF_ERROR(CheckBlasDims({g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch}));
  if (g.batch == 1) {
    return CublasStatus(
        cublasGemmEx(handle, op_a, op_b, static_cast<int>(g.m), static_cast<int>(g.n),
                     static_cast<int>(g.k), alpha_ptr, g.a, types.data, static_cast<int>(g.lda),
                     g.b, types.data, static_cast<int>(g.ldb), beta_ptr, g.c, types.data,
                     static_cast<int>(g.ldc), types.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  }
  return CublasStatus(
      cublasGemmStridedBatchedEx(
          handle, op_a, op_b, static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k),
          alpha_ptr, g.a, types.data, static_cast<int>(g.lda), g.stride_a, g.b, types.data,
          static_cast<int>(g.ldb), g.stride_b, beta_ptr, g.c, types.data, static_cast<int>(g.ldc),
          g.stride_c, static_cast<int>(g.batch), types.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

}  // namespace zerograph::runtime
