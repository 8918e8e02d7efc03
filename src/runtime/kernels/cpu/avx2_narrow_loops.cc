#include "runtime/kernels/cpu/avx2_narrow_loops.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zerograph::runtime {

#if defined(__x86_64__)
namespace {

// Only the functions between push_options and pop_options use AVX2 and F16C; the entry points
// below them check the CPU first, in code any x86-64 runs. Nothing here is an inline function
// another file also compiles, so no AVX2 copy of one can stand in for the portable one.
#pragma GCC push_options
#pragma GCC target("avx2,f16c")

__m256i Splat(int32_t value) { return _mm256_set1_epi32(value); }

// Whether any of the eight is NaN: the NaN patches below run only then, off the hot path.
bool AnyNan(__m256 value) {
  return _mm256_movemask_ps(_mm256_cmp_ps(value, value, _CMP_UNORD_Q)) != 0;
}

// Eight fp16 to fp32. F16C quiets a signaling NaN (sets mantissa bit 22); half.h keeps it
// signaling, so clear that bit again where the half's quiet bit (9) was clear.
__m256 LoadHalf(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m256 value = _mm256_cvtph_ps(h);
  if (!AnyNan(value)) return value;
  const __m256i bits = _mm256_cvtepu16_epi32(h);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, Splat(0x7fff)), Splat(0x7c00));
  const __m256i signaling = _mm256_andnot_si256(_mm256_slli_epi32(bits, 13), Splat(0x400000));
  const __m256i fix = _mm256_and_si256(nan, signaling);
  return _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(value), fix));
}

// Eight fp32 to fp16, rounding to nearest even. F16C keeps a NaN's top payload bits; half.h
// makes every NaN sign | 0x7e00, so clear the payload where the input was NaN.
void StoreHalf(uint16_t* p, __m256 value) {
  __m128i h = _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (AnyNan(value)) {
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
    const __m128i nan16 =
        _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
    h = _mm_andnot_si128(_mm_and_si128(nan16, _mm_set1_epi16(0x01ff)), h);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
}

// bf16 is an fp32's top half.
__m256 LoadBFloat16(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// half.h's FloatToBFloat16Bits, eight at a time: round the low half of each lane away to nearest
// even (a carry may bump the exponent), or for a NaN lane set the quiet bit instead; then keep each
// lane's top two bytes (a byte shuffle within each 128-bit half, then the halves joined).
void StoreBFloat16(uint16_t* p, __m256 value) {
  const __m256i x = _mm256_castps_si256(value);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), Splat(1));
  __m256i bits = _mm256_add_epi32(x, _mm256_add_epi32(odd, Splat(0x7fff)));
  if (AnyNan(value)) {
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
    bits = _mm256_blendv_epi8(bits, _mm256_or_si256(x, Splat(0x400000)), nan);
  }
  const __m256i top_halves =
      _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, 2, 3, 6, 7, 10,
                       11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(bits, top_halves), 0b1000);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}

template <NarrowFloat F>
__m256 Load8(const uint16_t* p) {
  return F == NarrowFloat::kFloat16 ? LoadHalf(p) : LoadBFloat16(p);
}
template <NarrowFloat F>
void Store8(uint16_t* p, __m256 value) {
  if constexpr (F == NarrowFloat::kFloat16) {
    StoreHalf(p, value);
  } else {
    StoreBFloat16(p, value);
  }
}

template <NarrowFloat F>
void AdamWLoop(const AdamWCoefficients& c, float grad_scale, int64_t n, const uint16_t* x,
               const uint16_t* g, const uint16_t* m, const uint16_t* v, uint16_t* x_out,
               uint16_t* m_out, uint16_t* v_out) {
  const __m256 scale = _mm256_set1_ps(grad_scale);
  const __m256 pre = _mm256_set1_ps(c.pre_decay), post = _mm256_set1_ps(c.post_decay);
  const __m256 step = _mm256_set1_ps(c.step_size), inv = _mm256_set1_ps(c.inv_sqrt_bc2);
  const __m256 b1 = _mm256_set1_ps(c.b1), b2 = _mm256_set1_ps(c.b2);
  const __m256 one_minus_b1 = _mm256_set1_ps(c.one_minus_b1);
  const __m256 one_minus_b2 = _mm256_set1_ps(c.one_minus_b2);
  const __m256 eps = _mm256_set1_ps(c.eps);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 gi = _mm256_mul_ps(Load8<F>(g + i), scale);
    const __m256 mi =
        _mm256_add_ps(_mm256_mul_ps(b1, Load8<F>(m + i)), _mm256_mul_ps(one_minus_b1, gi));
    const __m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, Load8<F>(v + i)),
                                    _mm256_mul_ps(one_minus_b2, _mm256_mul_ps(gi, gi)));
    const __m256 denom = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vi), inv), eps);
    const __m256 update = _mm256_div_ps(_mm256_mul_ps(step, mi), denom);
    const __m256 xi =
        _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(Load8<F>(x + i), pre), update), post);
    Store8<F>(x_out + i, xi);
    Store8<F>(m_out + i, mi);
    Store8<F>(v_out + i, vi);
  }
}

template <NarrowFloat F>
void SgdLoop(float lr, float grad_scale, int64_t n, const uint16_t* x, const uint16_t* g,
             uint16_t* y) {
  const __m256 rate = _mm256_set1_ps(lr), scale = _mm256_set1_ps(grad_scale);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 gi = _mm256_mul_ps(Load8<F>(g + i), scale);
    Store8<F>(y + i, _mm256_sub_ps(Load8<F>(x + i), _mm256_mul_ps(rate, gi)));
  }
}

template <NarrowFloat F>
void NarrowLoop(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) Store8<F>(out + i, _mm256_loadu_ps(in + i));
}

template <NarrowFloat F>
void WidenLoop(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) _mm256_storeu_ps(out + i, Load8<F>(in + i));
}

#pragma GCC pop_options

bool HasAvx2F16c() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}

// The elements the AVX2 loops do: whole groups of eight, on a CPU that has them.
int64_t Whole(int64_t n) { return HasAvx2F16c() ? n - n % 8 : 0; }

}  // namespace

int64_t AdamWUpdateAvx2(NarrowFloat format, const AdamWCoefficients& c, float grad_scale, int64_t n,
                        const uint16_t* x, const uint16_t* g, const uint16_t* m, const uint16_t* v,
                        uint16_t* x_out, uint16_t* m_out, uint16_t* v_out) {
  const int64_t done = Whole(n);
  if (format == NarrowFloat::kFloat16) {
    AdamWLoop<NarrowFloat::kFloat16>(c, grad_scale, done, x, g, m, v, x_out, m_out, v_out);
  } else {
    AdamWLoop<NarrowFloat::kBFloat16>(c, grad_scale, done, x, g, m, v, x_out, m_out, v_out);
  }
  return done;
}

int64_t SgdUpdateAvx2(NarrowFloat format, float lr, float grad_scale, int64_t n, const uint16_t* x,
                      const uint16_t* g, uint16_t* y) {
  const int64_t done = Whole(n);
  if (format == NarrowFloat::kFloat16) {
    SgdLoop<NarrowFloat::kFloat16>(lr, grad_scale, done, x, g, y);
  } else {
    SgdLoop<NarrowFloat::kBFloat16>(lr, grad_scale, done, x, g, y);
  }
  return done;
}

int64_t NarrowAvx2(NarrowFloat format, const float* in, uint16_t* out, int64_t n) {
  const int64_t done = Whole(n);
  if (format == NarrowFloat::kFloat16) {
    NarrowLoop<NarrowFloat::kFloat16>(in, out, done);
  } else {
    NarrowLoop<NarrowFloat::kBFloat16>(in, out, done);
  }
  return done;
}

int64_t WidenAvx2(NarrowFloat format, const uint16_t* in, float* out, int64_t n) {
  const int64_t done = Whole(n);
  if (format == NarrowFloat::kFloat16) {
    WidenLoop<NarrowFloat::kFloat16>(in, out, done);
  } else {
    WidenLoop<NarrowFloat::kBFloat16>(in, out, done);
  }
  return done;
}

#else  // not x86-64: the scalar loops do everything

int64_t AdamWUpdateAvx2(NarrowFloat, const AdamWCoefficients&, float, int64_t, const uint16_t*,
                        const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, uint16_t*,
                        uint16_t*) {
  return 0;
}
int64_t SgdUpdateAvx2(NarrowFloat, float, float, int64_t, const uint16_t*, const uint16_t*,
                      uint16_t*) {
  return 0;
}
int64_t NarrowAvx2(NarrowFloat, const float*, uint16_t*, int64_t) { return 0; }
int64_t WidenAvx2(NarrowFloat, const uint16_t*, float*, int64_t) { return 0; }

#endif

}  // namespace zerograph::runtime
