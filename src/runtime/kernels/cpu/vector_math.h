#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_VECTOR_MATH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_VECTOR_MATH_H_

#include <cstdint>

namespace zerograph::runtime {

// y[i] = exp(x[i]) and y[i] = erf(x[i]) for n floats; x and y may be the same array. On x86-64
// with glibc's vector math library (libmvec, glibc 2.35 or later) and a CPU with AVX2 and FMA,
// eight at a time through libmvec's _ZGVdN8v_expf and _ZGVdN8v_erff (at most 4 ulp from the
// correctly rounded result, as glibc documents for its vector functions, where std::exp and
// std::erf are within 1 or 2); elsewhere, and for the tail, std::exp and std::erf one at a time.
// The scalar functions do not vectorize without -ffast-math: in Softmax and Gelu they were most
// of the op's time.
void VectorExp(const float* x, float* y, int64_t n);
void VectorErf(const float* x, float* y, int64_t n);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_VECTOR_MATH_H_
