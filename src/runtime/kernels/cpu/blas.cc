#include "runtime/kernels/cpu/blas.h"

#include <dlfcn.h>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {
namespace {

CBLAS_TRANSPOSE Transpose(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

}  // namespace

std::string_view Blas::LibraryName() { return ZG_BLAS_SONAME; }

StatusOr<Blas> Blas::Open() {
  // Never closed: the library's worker threads live as long as the process.
  void* library = dlopen(ZG_BLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return UnavailableError(StrCat("cannot load the BLAS library '", ZG_BLAS_SONAME,
                                   "', which the CPU's matrix products need: ", dlerror()));
  }
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(library, "cblas_sgemm"));
  auto dgemm = reinterpret_cast<Dgemm>(dlsym(library, "cblas_dgemm"));
  if (sgemm == nullptr || dgemm == nullptr) {
    return UnavailableError(
        StrCat("the BLAS library '", ZG_BLAS_SONAME, "' has no cblas_sgemm or cblas_dgemm"));
  }
  // OpenBLAS's own; absent from other BLAS libraries.
  auto num_threads = reinterpret_cast<int (*)()>(dlsym(library, "openblas_get_num_threads"));
  return Blas(sgemm, dgemm, num_threads);
}

StatusOr<const Blas*> Blas::Get() {
  static const StatusOr<Blas> blas = Open();
  if (!blas.ok()) return blas.status();
  return &*blas;
}

void Blas::Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                int64_t ldc) const {
  sgemm_(CblasRowMajor, Transpose(trans_a), Transpose(trans_b), static_cast<int>(m),
         static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
         static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

void Blas::Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                int64_t ldc) const {
  dgemm_(CblasRowMajor, Transpose(trans_a), Transpose(trans_b), static_cast<int>(m),
         static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
         static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

int Blas::NumThreads() const { return num_threads_ != nullptr ? num_threads_() : -1; }

}  // namespace zerograph::runtime
