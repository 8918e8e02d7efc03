#include "runtime/kernels/cpu/vector_math.h"

#include <cmath>

#if defined(ZG_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define ZG_USE_LIBMVEC 1
#include <immintrin.h>
// libmvec's AVX2 variants (vector ABI 'd': 8 floats in a ymm register).
extern "C" __m256 _ZGVdN8v_expf(__m256);
extern "C" __m256 _ZGVdN8v_erff(__m256);
#endif

namespace zerograph::runtime {
namespace {

#ifdef ZG_USE_LIBMVEC
bool HaveAvx2() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}

// The whole blocks of eight; returns how many elements were done.
__attribute__((target("avx2,fma"))) int64_t ExpAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _ZGVdN8v_expf(_mm256_loadu_ps(x + i)));
  return i;
}
__attribute__((target("avx2,fma"))) int64_t ErfAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _ZGVdN8v_erff(_mm256_loadu_ps(x + i)));
  return i;
}
#endif

}  // namespace

void VectorExp(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef ZG_USE_LIBMVEC
  if (HaveAvx2()) i = ExpAvx2(x, y, n);
#endif
  for (; i < n; ++i) y[i] = std::exp(x[i]);
}

void VectorErf(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef ZG_USE_LIBMVEC
  if (HaveAvx2()) i = ErfAvx2(x, y, n);
#endif
  for (; i < n; ++i) y[i] = std::erf(x[i]);
}

}  // namespace zerograph::runtime
