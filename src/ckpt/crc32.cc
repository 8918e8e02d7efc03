#include "crc32.h"

#include <zlib.h>

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zerograph {
namespace {

uint32_t ZlibCrc32(uint32_t crc, std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(
      ::crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

#if defined(__x86_64__)

#define ZG_CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

ZG_CLMUL_TARGET inline __m128i Load(const std::byte* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// The low half of x times x^(k1 or k3) plus its high half times x^(k2 or k4), onto `next`.
ZG_CLMUL_TARGET inline __m128i Fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

// Carry-less folding (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction", Intel, 2009), on the raw register: no inversion before or after. Four 128-bit
// lanes fold 64 bytes per step by x^(512±32) mod P, then fold into one lane by x^(128±32) mod P,
// then 128 -> 64 -> 32 bits and a Barrett reduction. The constants are those powers of x modulo
// P = 0x1db710641, bit-reflected, and mu = floor(x^64 / P). `size` is a multiple of 16, >= 64.
ZG_CLMUL_TARGET uint32_t FoldCrc32(uint32_t raw, const std::byte* data, size_t size) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly_mu = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  __m128i x1 = _mm_xor_si128(Load(data), _mm_cvtsi32_si128(static_cast<int>(raw)));
  __m128i x2 = Load(data + 16);
  __m128i x3 = Load(data + 32);
  __m128i x4 = Load(data + 48);
  data += 64;
  size -= 64;
  for (; size >= 64; data += 64, size -= 64) {
    x1 = Fold(x1, k1k2, Load(data));
    x2 = Fold(x2, k1k2, Load(data + 16));
    x3 = Fold(x3, k1k2, Load(data + 32));
    x4 = Fold(x4, k1k2, Load(data + 48));
  }
  x1 = Fold(x1, k3k4, x2);
  x1 = Fold(x1, k3k4, x3);
  x1 = Fold(x1, k3k4, x4);
  for (; size >= 16; data += 16, size -= 16) x1 = Fold(x1, k3k4, Load(data));
  // 128 -> 64 bits.
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k3k4, 0x10));
  // 64 -> 32 bits (the low 32 bits times x^64 mod P).
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
                     _mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5, 0x00));
  // Barrett: q = (low32(x) * mu) mod x^32, remainder = x - q * P.
  __m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), poly_mu, 0x10), low32);
  x1 = _mm_xor_si128(x1, _mm_clmulepi64_si128(q, poly_mu, 0x00));
  return static_cast<uint32_t>(_mm_extract_epi32(x1, 1));
}

#undef ZG_CLMUL_TARGET

bool HasCarrylessMultiply() {
  static const bool has = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return has;
}

#endif

}  // namespace

uint32_t Crc32(uint32_t crc, std::span<const std::byte> bytes) {
#if defined(__x86_64__)
  // Below a few hundred bytes setting up the lanes costs more than zlib's tables.
  constexpr size_t kMinFold = 256;
  if (bytes.size() >= kMinFold && HasCarrylessMultiply()) {
    const size_t folded = bytes.size() & ~size_t{15};
    // zlib's CRC is the raw register inverted before and after.
    crc = ~FoldCrc32(~crc, bytes.data(), folded);
    bytes = bytes.subspan(folded);
  }
#endif
  return ZlibCrc32(crc, bytes);
}

uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, int64_t length_b) {
  return static_cast<uint32_t>(::crc32_combine64(crc_a, crc_b, static_cast<z_off64_t>(length_b)));
}

}  // namespace zerograph
