#include "zerograph/runtime/half.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "runtime/half_scalar_reference.h"

namespace zerograph::runtime {
namespace {

// An independent reference: GCC's _Float16 conversions (libgcc's __truncsfhf2 / __extendhfsf2)
// round to nearest even.
uint16_t ReferenceHalfBits(float value) {
  return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
}

// An independent reference for bf16: of the two bf16 values around `value`, the nearer, ties to
// the one with an even last bit; computed in double.
uint16_t ReferenceBFloat16Bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t below = static_cast<uint16_t>(bits >> 16);  // truncation toward zero
  if ((bits & 0xffffu) == 0) return below;
  const uint16_t above = static_cast<uint16_t>(below + 1);
  const double lo = std::fabs(static_cast<double>(BFloat16BitsToFloat(below)));
  // Past the largest finite value, rounding goes to inf as if to the next power of two, 2^128.
  const float above_value = BFloat16BitsToFloat(above);
  const double hi = std::isinf(above_value) ? std::ldexp(1.0, 128) : std::fabs(double{above_value});
  const double v = std::fabs(static_cast<double>(value));
  if (v - lo < hi - v) return below;
  if (hi - v < v - lo) return above;
  return (below & 1u) == 0 ? below : above;
}

// Every half converts to the float it denotes and back to itself (NaNs stay NaN).
TEST(HalfTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(bits));
    const float reference =
        static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(bits)));
    if (std::isnan(reference)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << bits;
      ASSERT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(f))));
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(f), std::bit_cast<uint32_t>(reference)) << std::hex << bits;
    ASSERT_EQ(FloatToHalfBits(f), bits) << std::hex << bits;
  }
}

// Floats between halves round to nearest even, including subnormals, overflow and ties: every
// float whose bits are a multiple of 97 apart (about 44M values) against the reference.
TEST(HalfTest, FloatToHalfMatchesReferenceRounding) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 97) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalfBits(f), ReferenceHalfBits(f)) << std::hex << bits;
  }
}

// Exact ties and the edges: halfway values go to the even neighbour; 65520 overflows to inf.
TEST(HalfTest, TiesAndEdgesRoundToEven) {
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1p-11f), 0x3c00u);      // tie, 1.0 is even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * 0x1p-11f), 0x3c02u);  // tie, up to even
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bffu);
  EXPECT_EQ(FloatToHalfBits(65519.99f), 0x7bffu);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00u);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_EQ(FloatToHalfBits(0x1p-24f), 0x0001u);  // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(0x1p-25f), 0x0000u);  // tie, to even 0
  EXPECT_EQ(FloatToHalfBits(0x1.8p-25f), 0x0001u);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000u);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN()) & 0x7e00u, 0x7e00u);
}

// bf16 conversion rounds to nearest even (against a reference computed in double) and keeps NaN.
TEST(HalfTest, FloatToBFloat16MatchesReferenceRounding) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 89) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(f)))) << std::hex << bits;
      continue;
    }
    if (std::isinf(f)) {
      ASSERT_EQ(FloatToBFloat16Bits(f), bits >> 16);
      continue;
    }
    ASSERT_EQ(FloatToBFloat16Bits(f), ReferenceBFloat16Bits(f)) << std::hex << bits;
  }
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + 0x1p-8f), 0x3f80u);                     // tie, down to even
  EXPECT_EQ(FloatToBFloat16Bits(std::bit_cast<float>(0x7f7fffffu)), 0x7f80u);  // max -> inf
}

// The typed helpers the kernels use agree with the bit functions.
TEST(HalfTest, TypedHelpersWrapTheBitConversions) {
  EXPECT_EQ(FromFloat<Float16>(1.5f).bits, FloatToHalfBits(1.5f));
  EXPECT_EQ(FromFloat<BFloat16>(1.5f).bits, FloatToBFloat16Bits(1.5f));
  EXPECT_EQ(ToFloat(Float16{0x3e00}), 1.5f);
  EXPECT_EQ(ToFloat(BFloat16{0x3fc0}), 1.5f);
  EXPECT_EQ(FromFloat<float>(2.5f), 2.5f);
}

// The branch-free conversions give exactly the scalar code's bits: every half widens alike (NaN
// payloads, signaling ones included, kept as they were).
TEST(HalfTest, EveryHalfWidensAsTheScalarCode) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    ASSERT_EQ(std::bit_cast<uint32_t>(HalfBitsToFloat(h)),
              std::bit_cast<uint32_t>(scalar_reference::HalfBitsToFloat(h)))
        << std::hex << bits;
  }
}

// Narrowing matches the scalar code on the floats where rounding decides: for every 16-bit
// pattern, the floats at and two ulps around the half's value and the midpoint to the next half
// (subnormal ties and overflow included), and bf16's round-off bits 0, 1, 0x7fff, 0x8000, 0x8001
// and 0xffff; then every 997th float pattern (4.3M), NaNs included.
TEST(HalfTest, NarrowingMatchesTheScalarCode) {
  auto expect_same = [](uint32_t bits) {
    const float f = std::bit_cast<float>(bits);
    ASSERT_EQ(FloatToHalfBits(f), scalar_reference::FloatToHalfBits(f)) << std::hex << bits;
    ASSERT_EQ(FloatToBFloat16Bits(f), scalar_reference::FloatToBFloat16Bits(f)) << std::hex << bits;
  };
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7fffu) < 0x7c00u) {  // finite halves and the midpoint to the next one up
      const float value = scalar_reference::HalfBitsToFloat(h);
      const float next = scalar_reference::HalfBitsToFloat(static_cast<uint16_t>(h + 1));
      const uint32_t at = std::bit_cast<uint32_t>(value);
      const uint32_t mid = std::bit_cast<uint32_t>(value + (next - value) / 2);
      for (uint32_t d = 0; d <= 4; ++d) {
        ASSERT_NO_FATAL_FAILURE(expect_same(at + d - 2));
        ASSERT_NO_FATAL_FAILURE(expect_same(mid + d - 2));
      }
    }
    for (uint32_t low : {0x0u, 0x1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      ASSERT_NO_FATAL_FAILURE(expect_same((bits << 16) | low));
    }
  }
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    ASSERT_NO_FATAL_FAILURE(expect_same(static_cast<uint32_t>(bits)));
  }
}

}  // namespace
}  // namespace zerograph::runtime
