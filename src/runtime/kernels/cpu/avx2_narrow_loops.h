#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_AVX2_NARROW_LOOPS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_AVX2_NARROW_LOOPS_H_

// The fp16 and bf16 loops mixed precision runs most (the AdamW and SGD updates, Cast to and from
// fp32), eight elements at a time with AVX2 and F16C's conversions, on CPUs that have them: the
// portable build (no -march) vectorizes the branch-free conversions of half.h with SSE2 only, at
// a fraction of memory bandwidth. Each function returns how many leading elements it did: n - n % 8
// where the CPU has AVX2 and F16C (checked once), else 0; the caller does the rest with the scalar
// loop. Results equal the scalar loops' bit for bit: the same fp32 operations in the same order
// (no fused multiply-add), round to nearest even, and NaNs patched to what half.h makes of them.

#include <cstdint>

#include "runtime/kernels/adamw_coefficients.h"

namespace zerograph::runtime {

// Which 16-bit format the uint16_t elements hold.
enum class NarrowFloat { kFloat16, kBFloat16 };

// The callers' view of their element types (zerograph/runtime/half.h), declared only: the AVX2
// file compiles no inline function that other files compile too.
struct Float16;
struct BFloat16;
inline constexpr NarrowFloat FormatOf(const Float16*) { return NarrowFloat::kFloat16; }
inline constexpr NarrowFloat FormatOf(const BFloat16*) { return NarrowFloat::kBFloat16; }
template <typename T>
const uint16_t* Bits(const T* p) {
  return reinterpret_cast<const uint16_t*>(p);
}
template <typename T>
uint16_t* Bits(T* p) {
  return reinterpret_cast<uint16_t*>(p);
}

// AdamW's element loop (adamw_update.h) with G = grad_scale·g.
int64_t AdamWUpdateAvx2(NarrowFloat format, const AdamWCoefficients& c, float grad_scale, int64_t n,
                        const uint16_t* x, const uint16_t* g, const uint16_t* m, const uint16_t* v,
                        uint16_t* x_out, uint16_t* m_out, uint16_t* v_out);

// SGD's: y = x − lr·(grad_scale·g).
int64_t SgdUpdateAvx2(NarrowFloat format, float lr, float grad_scale, int64_t n, const uint16_t* x,
                      const uint16_t* g, uint16_t* y);

// Cast between fp32 and the 16-bit format.
int64_t NarrowAvx2(NarrowFloat format, const float* in, uint16_t* out, int64_t n);
int64_t WidenAvx2(NarrowFloat format, const uint16_t* in, float* out, int64_t n);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_AVX2_NARROW_LOOPS_H_
