#ifndef ZEROGRAPH_RUNTIME_HALF_H_
#define ZEROGRAPH_RUNTIME_HALF_H_

#include <cstdint>

#include "zerograph/ir/half_bits.h"

namespace zerograph::runtime {

// The 16-bit float formats, stored as their bits. Kernels compute in fp32 and store the narrow
// type: load with ToFloat(), store with FromFloat<T>(), which round as zerograph/ir/half_bits.h
// says.

// IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits.
struct Float16 {
  uint16_t bits = 0;
};

// bfloat16: the top half of an fp32 (1 sign, 8 exponent, 7 mantissa bits).
struct BFloat16 {
  uint16_t bits = 0;
};

// Loads as fp32 (identity for float; double rounds to nearest).
inline float ToFloat(float value) { return value; }
inline float ToFloat(Float16 value) { return HalfBitsToFloat(value.bits); }
inline float ToFloat(BFloat16 value) { return BFloat16BitsToFloat(value.bits); }

// Stores an fp32 value as T, rounding to nearest even.
template <typename T>
T FromFloat(float value);
template <>
inline float FromFloat<float>(float value) {
  return value;
}
template <>
inline Float16 FromFloat<Float16>(float value) {
  return Float16{FloatToHalfBits(value)};
}
template <>
inline BFloat16 FromFloat<BFloat16>(float value) {
  return BFloat16{FloatToBFloat16Bits(value)};
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_HALF_H_
