#ifndef ZEROGRAPH_TESTS_RUNTIME_HALF_SCALAR_REFERENCE_H_
#define ZEROGRAPH_TESTS_RUNTIME_HALF_SCALAR_REFERENCE_H_

// The 16-bit float conversions as half.h wrote them before they went branch-free (for loops that
// vectorize): plain scalar code whose results the fast ones must reproduce bit for bit, NaN
// payloads included.

#include <bit>
#include <cstdint>

namespace zerograph::runtime::scalar_reference {

inline uint16_t FloatToHalfBits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN, inf
  // 65520 is halfway between 65504 (the largest half) and 65536; the tie goes to the even 65536.
  if (abs >= 0x477ff000u) return sign | 0x7c00u;
  if (abs >= 0x38800000u) {  // >= 2^-14: a normal half. Rebias the exponent (127 -> 15), round.
    uint32_t rebiased = abs - 0x38000000u;
    rebiased += 0xfffu + ((rebiased >> 13) & 1u);  // a carry out of the mantissa bumps the exponent
    return static_cast<uint16_t>(sign | (rebiased >> 13));
  }
  // A subnormal half counts units of 2^-24: value = mantissa * 2^(exponent - 150).
  const uint32_t exponent = abs >> 23;
  const uint32_t shift = 126 - exponent;               // >= 14
  if (shift > 24) return static_cast<uint16_t>(sign);  // below 2^-25, or exactly it: rounds to 0
  const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
  uint32_t units = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (units & 1u))) ++units;
  return static_cast<uint16_t>(sign | units);
}

inline float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in fp32
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t FloatToBFloat16Bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace zerograph::runtime::scalar_reference

#endif  // ZEROGRAPH_TESTS_RUNTIME_HALF_SCALAR_REFERENCE_H_
