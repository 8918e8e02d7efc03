#ifndef ZEROGRAPH_IR_HALF_BITS_H_
#define ZEROGRAPH_IR_HALF_BITS_H_

#include <bit>
#include <cstdint>

namespace zerograph {

// fp32 to and from the bits of the 16-bit float formats (IEEE binary16: 1 sign, 5 exponent, 10
// mantissa bits; bfloat16: the top half of an fp32). Conversions round to nearest, ties to even,
// keep infinities and turn NaN into a quiet NaN of the same sign, as CUDA's __float2half_rn and
// __float2bfloat16_rn do. They have no branches, so loops over them vectorize; the fp16 ones rely
// on the FPU's defaults (round to nearest even, subnormals not flushed). The rewrite converts
// initializers with them (AMP, master weights) and the CPU kernels compute with them
// (runtime/half.h), so both round alike.

// fp32 -> fp16 without branches, so loops over it vectorize (PyTorch's c10
// fp16_ieee_from_fp32_value, from Marat Dukhan's FP16 library): the fp32 add below rounds |value|
// at the half's last place, in the FPU's round-to-nearest-even. Scaling by 2^112 then 2^-110 sends
// whatever is past the half range to inf; `bias` (at least 2^-14's exponent, where halves turn
// subnormal) puts the half's last place at the add's rounding position. NaN becomes a quiet NaN of
// the same sign.
inline uint16_t FloatToHalfBits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t shl1 = x + x;  // the sign dropped
  const uint32_t sign = (x >> 16) & 0x8000u;
  const float magnitude = std::bit_cast<float>(x & 0x7fffffffu);
  const float scaled = (magnitude * 0x1p+112f) * 0x1p-110f;
  uint32_t bias = shl1 & 0xff000000u;
  bias = bias < 0x71000000u ? 0x71000000u : bias;
  const float rounded = std::bit_cast<float>((bias >> 1) + 0x07800000u) + scaled;
  const uint32_t bits = std::bit_cast<uint32_t>(rounded);
  const uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  // A mask, not `?:`: GCC would move the float math under a branch that it then cannot vectorize.
  const uint32_t nan = 0u - static_cast<uint32_t>(shl1 > 0xff000000u);
  return static_cast<uint16_t>(sign | (nonsign & ~nan) | (0x7e00u & nan));
}

// fp16 -> fp32, exact and without branches: normal halves (and inf/NaN, payload kept) shift into
// place with the exponent rebiased; a subnormal's m·2^-24 is (0.5 + m·2^-24) − 0.5, both exact.
inline float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t nonsign = bits & 0x7fffu;
  const uint32_t rebias = nonsign >= 0x7c00u ? 0x70000000u : 0x38000000u;  // +224 or +112
  const uint32_t normal = (nonsign << 13) + rebias;
  const float subnormal = std::bit_cast<float>(0x3f000000u | nonsign) - 0.5f;
  const uint32_t tiny = 0u - static_cast<uint32_t>(nonsign < 0x0400u);  // as in FloatToHalfBits
  const uint32_t magnitude = (std::bit_cast<uint32_t>(subnormal) & tiny) | (normal & ~tiny);
  return std::bit_cast<float>(sign | magnitude);
}

// fp32 -> bf16: round the low 16 bits away to nearest even (a carry may bump the exponent, up to
// inf); NaN keeps its sign and top payload and turns quiet. A select, not a branch, so it
// vectorizes.
inline uint16_t FloatToBFloat16Bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

inline float BFloat16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_HALF_BITS_H_
