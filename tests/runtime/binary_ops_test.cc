#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using testing::BroadcastIndex;
using testing::ExpectNear;
using testing::KernelRunner;
using testing::UnitRoundoff;
using testing::Unravel;
using testing::Values;

struct BroadcastCase {
  Shape a;
  Shape b;
  Shape out;
};

// numpy's broadcasting, including scalars, 1-sized dims on either side and rank differences.
const std::vector<BroadcastCase>& Cases() {
  static const std::vector<BroadcastCase> cases = {{{3, 4}, {3, 4}, {3, 4}},
                                                   {{3, 4}, {}, {3, 4}},
                                                   {{}, {3, 4}, {3, 4}},
                                                   {{3, 4}, {4}, {3, 4}},
                                                   {{3, 1}, {1, 4}, {3, 4}},
                                                   {{2, 3, 4}, {3, 1}, {2, 3, 4}},
                                                   {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}},
                                                   {{5}, {1}, {5}},
                                                   {{1, 1}, {2, 3, 1}, {2, 3, 1}},
                                                   {{2, 0, 3}, {3}, {2, 0, 3}},
                                                   {{4, 1, 3, 1}, {5, 1, 2}, {4, 5, 3, 2}}};
  return cases;
}

// out[i] = f(a[ia], b[ib]) over the broadcast shape, in double.
std::vector<double> Reference(const std::vector<double>& a, const Shape& a_shape,
                              const std::vector<double>& b, const Shape& b_shape, const Shape& out,
                              const std::function<double(double, double)>& f) {
  std::vector<double> result;
  for (int64_t i = 0; i < NumElements(out); ++i) {
    const std::vector<int64_t> index = Unravel(i, out);
    result.push_back(f(a[static_cast<size_t>(BroadcastIndex(index, a_shape))],
                       b[static_cast<size_t>(BroadcastIndex(index, b_shape))]));
  }
  return result;
}

struct OpCase {
  const char* op;
  std::function<double(double, double)> f;
};

class BinaryOpsTest : public ::testing::TestWithParam<DataType> {};

// Add, Sub, Mul and Div broadcast as numpy does and match a double reference to within one
// rounding of the dtype.
TEST_P(BinaryOpsTest, ArithmeticBroadcastsLikeNumpy) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  const std::vector<OpCase> ops = {{"Add", std::plus<double>()},
                                   {"Sub", std::minus<double>()},
                                   {"Mul", std::multiplies<double>()},
                                   {"Div", std::divides<double>()}};
  uint32_t seed = 1;
  for (const BroadcastCase& c : Cases()) {
    DeviceTensor a = runner.Random(dtype, c.a, seed++, 0.5, 2);
    DeviceTensor b = runner.Random(dtype, c.b, seed++, 0.5, 2);
    for (const OpCase& op : ops) {
      const std::string what =
          std::string(op.op) + " " + ShapeToString(c.a) + " " + ShapeToString(c.b);
      StatusOr<std::vector<DeviceTensor>> out = runner.Run("", op.op, {a, b}, 1);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      EXPECT_EQ((*out)[0].shape(), c.out) << what;
      ExpectNear(Values((*out)[0]), Reference(Values(a), c.a, Values(b), c.b, c.out, op.f),
                 2 * UnitRoundoff(dtype), 0, what);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BinaryOpsTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// Integer Add/Sub/Mul are exact.
TEST(BinaryOpsIntTest, IntegerArithmeticIsExact) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kInt32, DataType::kInt64}) {
    DeviceTensor a = runner.Random(dtype, {3, 4}, 7, -100, 100);
    DeviceTensor b = runner.Random(dtype, {4}, 8, -100, 100);
    StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Mul", {a, b}, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectNear(Values((*out)[0]),
               Reference(Values(a), {3, 4}, Values(b), {4}, {3, 4}, std::multiplies<double>()), 0,
               0);
  }
}

// Greater broadcasts and yields bool.
TEST(BinaryOpsGreaterTest, GreaterYieldsBool) {
  KernelRunner runner;
  DeviceTensor a = runner.MakeTensor(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  DeviceTensor b = runner.MakeTensor(DataType::kFloat32, {3}, {2, 2, 7});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Greater", {a, b}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DataType::kBool);
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{0, 0, 0, 1, 1, 0}));
}

// ReluGrad(dY, X) passes dY where X > 0 (X = 0 gives 0), for fp32, fp16 and bf16.
TEST(BinaryOpsReluGradTest, ReluGradMasksByInput) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DeviceTensor dy = runner.MakeTensor(dtype, {2, 2}, {1.5, -2, 3, 4});
    DeviceTensor x = runner.MakeTensor(dtype, {2, 2}, {0.5, 1, 0, -1});
    StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "ReluGrad", {dy, x}, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1.5, -2, 0, 0}));
  }
}

// Shapes that do not broadcast are refused at shape inference, naming both.
TEST(BinaryOpsErrorTest, IncompatibleShapesAreRefused) {
  KernelRunner runner;
  DeviceTensor a = runner.Random(DataType::kFloat32, {3, 4}, 1);
  DeviceTensor b = runner.Random(DataType::kFloat32, {3}, 2);
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Add", {a, b}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("[3,4] and [3]"), std::string_view::npos)
      << out.status().ToString();
  DeviceTensor c = runner.Random(DataType::kFloat64, {3, 4}, 3);
  EXPECT_FALSE(runner.Run("", "Add", {a, c}, 1).ok());  // dtypes differ
}

}  // namespace
}  // namespace zerograph::runtime
