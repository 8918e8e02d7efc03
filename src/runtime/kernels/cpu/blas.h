#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_BLAS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_BLAS_H_

#include <cblas.h>

#include <cstdint>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph::runtime {

// The BLAS library the build found (OpenBLAS on Debian), opened when the first kernel that
// multiplies runs rather than linked: a program that multiplies no matrices (rewrite-graph,
// checkpoint-convert, graph-exec before its first step) then pays neither its load (16k
// relocations, 2.4 ms, and 2.5 MB of resident pages) nor its worker pool, which OpenBLAS starts
// as it loads and which spins on the cores the program's own threads need.
class Blas {
 public:
  // The library, opened on the first call from any thread; an error names it and says why it
  // did not load.
  static StatusOr<const Blas*> Get();
  // The name the library is opened by (its soname).
  static std::string_view LibraryName();

  // C[m, n] = alpha·op(A)·op(B) + beta·C, row-major, with the leading dimensions as stored.
  void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
            int64_t ldc) const;
  void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
            const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
            int64_t ldc) const;

  // OpenBLAS's thread count; -1 for a BLAS without one.
  int NumThreads() const;

 private:
  using Sgemm = decltype(&cblas_sgemm);
  using Dgemm = decltype(&cblas_dgemm);

  Blas(Sgemm sgemm, Dgemm dgemm, int (*num_threads)())
      : sgemm_(sgemm), dgemm_(dgemm), num_threads_(num_threads) {}
  static StatusOr<Blas> Open();

  Sgemm sgemm_;
  Dgemm dgemm_;
  int (*num_threads_)();
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_BLAS_H_
