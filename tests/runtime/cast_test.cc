#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

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
TEST(CastTest, UnknownTargetIsRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {1}, {1});
  EXPECT_FALSE(runner.Run("", "Cast", {x}, 1, {Attr("to", 99)}).ok());
  EXPECT_FALSE(runner.Run("", "Cast", {x}, 1, {Attr("to", 8)}).ok());  // string
}

}  // namespace
}  // namespace zerograph::runtime
