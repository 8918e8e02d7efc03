#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/runtime/half.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;
using testing::Values;

// What casting `v` to `dtype` gives: round to nearest even for floats (through fp32 for the
// 16-bit ones), truncation toward zero for integers, nonzero for bool.
double Expected(double v, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return static_cast<float>(v);
    case DataType::kFloat16:
      return HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v)));
    case DataType::kBFloat16:
      return BFloat16BitsToFloat(FloatToBFloat16Bits(static_cast<float>(v)));
    case DataType::kBool:
      return v != 0 ? 1 : 0;
    case DataType::kInt8:
    case DataType::kInt32:
    case DataType::kInt64:
      return std::trunc(v);
    case DataType::kUint8:
      return std::trunc(v);
    default:
      return v;
  }
}

// Every pair of the supported dtypes casts as numpy's astype does, on values every type holds.
TEST(CastTest, EveryPairConvertsLikeNumpy) {
  KernelRunner runner;
  const std::vector<DataType> dtypes = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                        DataType::kBFloat16, DataType::kInt64,   DataType::kInt32,
                                        DataType::kInt8,     DataType::kUint8,   DataType::kBool};
  for (DataType from : dtypes) {
    // Values representable in the source type and in range for every target.
    std::vector<double> values = {0, 1, 2, 3, 100, 7, 1, 0};
    if (from == DataType::kBool) values = {0, 1, 1, 0, 1, 0, 0, 1};
    DeviceTensor x = runner.MakeTensor(from, {2, 4}, values);
    for (DataType to : dtypes) {
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run("", "Cast", {x}, 1, {Attr("to", static_cast<int64_t>(to))});
      ASSERT_TRUE(out.ok()) << DataTypeName(from) << " -> " << DataTypeName(to) << ": "
                            << out.status().ToString();
      ASSERT_EQ((*out)[0].dtype(), to);
      std::vector<double> expected;
      for (double v : Values(x)) expected.push_back(Expected(v, to));
      EXPECT_EQ(Values((*out)[0]), expected) << DataTypeName(from) << " -> " << DataTypeName(to);
    }
  }
}

// Casting to a narrow float rounds to nearest even; to an integer truncates toward zero.
TEST(CastTest, RoundsFloatsAndTruncatesIntegers) {
  KernelRunner runner;
  const std::vector<double> values = {1.0 + 1.0 / 2048, -2.7, 2.7, 1.0 + 3.0 / 2048, 0.1};
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {5}, values);
  for (DataType to :
       {DataType::kFloat16, DataType::kBFloat16, DataType::kInt32, DataType::kInt64}) {
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run("", "Cast", {x}, 1, {Attr("to", static_cast<int64_t>(to))});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::vector<double> expected;
    for (double v : Values(x)) expected.push_back(Expected(v, to));
    EXPECT_EQ(Values((*out)[0]), expected) << DataTypeName(to);
  }
}

// A `to` that names no data type is refused when the kernel is made.
// The fp32 <-> fp16/bf16 casts (eight at a time where the CPU has AVX2 and F16C) give half.h's
// bits exactly: every 16-bit pattern widened, signaling NaNs included, and floats narrowed where
// rounding decides (ties, subnormals, overflow, NaN payloads, infinities).
TEST(CastTest, NarrowFloatsMatchHalfHBitForBit) {
  KernelRunner runner;
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<uint32_t> floats;
  for (uint32_t h = 0; h < 65536; h += 3) {
    floats.push_back(std::bit_cast<uint32_t>(HalfBitsToFloat(static_cast<uint16_t>(h))) + h % 5);
    floats.push_back((h << 16) | (h % 2 ? 0x8000u : 0x7fffu));  // bf16 ties and near-ties
  }
  floats.insert(floats.end(), {0x7f800000u, 0xff800000u, 0x7f800001u, 0xffc12345u, 0x7fbfffffu,
                               0x33000000u, 0x33000001u, 0x477ff000u, 0x477fefffu, 0x00000001u});
  for (DataType narrow : {DataType::kFloat16, DataType::kBFloat16}) {
    const bool half = narrow == DataType::kFloat16;
    DeviceTensor in = runner.MakeTensor(narrow, {65536}, std::vector<double>(65536, 0));
    std::memcpy(in.data(), halves.data(), 65536 * sizeof(uint16_t));
    StatusOr<std::vector<DeviceTensor>> wide =
        runner.Run("", "Cast", {in}, 1, {Attr("to", int64_t{1})});  // to fp32
    ASSERT_TRUE(wide.ok()) << wide.status().ToString();
    const uint32_t* got = (*wide)[0].data_as<const uint32_t>();
    for (uint32_t i = 0; i < 65536; ++i) {
      const uint16_t h = static_cast<uint16_t>(i);
      const float expected = half ? HalfBitsToFloat(h) : BFloat16BitsToFloat(h);
      ASSERT_EQ(got[i], std::bit_cast<uint32_t>(expected)) << DataTypeName(narrow) << " " << i;
    }
    DeviceTensor from = runner.MakeTensor(DataType::kFloat32, {static_cast<int64_t>(floats.size())},
                                          std::vector<double>(floats.size(), 0));
    std::memcpy(from.data(), floats.data(), floats.size() * sizeof(uint32_t));
    StatusOr<std::vector<DeviceTensor>> narrowed =
        runner.Run("", "Cast", {from}, 1, {Attr("to", static_cast<int64_t>(narrow))});
    ASSERT_TRUE(narrowed.ok()) << narrowed.status().ToString();
    const uint16_t* bits = (*narrowed)[0].data_as<const uint16_t>();
    for (size_t i = 0; i < floats.size(); ++i) {
      const float f = std::bit_cast<float>(floats[i]);
      ASSERT_EQ(bits[i], half ? FloatToHalfBits(f) : FloatToBFloat16Bits(f))
          << DataTypeName(narrow) << " from " << std::hex << floats[i];
    }
  }
}

TEST(CastTest, UnknownTargetIsRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {1}, {1});
  EXPECT_FALSE(runner.Run("", "Cast", {x}, 1, {Attr("to", 99)}).ok());
  EXPECT_FALSE(runner.Run("", "Cast", {x}, 1, {Attr("to", 8)}).ok());  // string
}

}  // namespace
}  // namespace zerograph::runtime
