#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::UnitRoundoff;
using testing::Unravel;
using testing::Values;

// Sum or mean over `axes` (all when empty) in double; the output keeps reduced axes as 1 or drops
// them.
std::vector<double> Reference(const std::vector<double>& x, const Shape& shape,
                              std::vector<int64_t> axes, bool keepdims, bool mean,
                              Shape* out_shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  Shape kept;
  out_shape->clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    kept.push_back(reduced[d] ? 1 : shape[d]);
    if (!reduced[d]) out_shape->push_back(shape[d]);
    if (reduced[d] && keepdims) out_shape->push_back(1);
  }
  std::vector<double> sums(static_cast<size_t>(NumElements(kept)), 0.0);
  for (int64_t i = 0; i < NumElements(shape); ++i) {
    std::vector<int64_t> index = Unravel(i, shape);
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) o = o * kept[d] + (reduced[d] ? 0 : index[d]);
    sums[static_cast<size_t>(o)] += x[static_cast<size_t>(i)];
  }
  if (mean) {
    const double count = static_cast<double>(NumElements(shape) / NumElements(kept));
    for (double& s : sums) s /= count;
  }
  return sums;
}

struct ReduceCase {
  Shape shape;
  std::vector<int64_t> axes;
  bool keepdims;
};

const std::vector<ReduceCase> kCases = {
    {{4, 6}, {0}, false},      {{4, 6}, {1}, true},      {{4, 6}, {}, false},
    {{2, 3, 4}, {0, 2}, true}, {{2, 3, 4}, {-1}, false}, {{2, 3, 4}, {1}, false},
    {{3, 1, 5}, {1}, false},   {{7}, {0}, true},         {{2, 3, 4, 5}, {1, 3}, false}};

class ReduceTest : public ::testing::TestWithParam<DataType> {};

// ReduceSum (axes as input, opset 13) and ReduceMean (axes attribute, opset <= 17) with keepdims
// both ways, negative axes, and everything reduced when axes are empty.
TEST_P(ReduceTest, SumAndMeanMatchReference) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  uint32_t seed = 50;
  for (const ReduceCase& c : kCases) {
    DeviceTensor x = runner.Random(dtype, c.shape, seed++);
    const std::string what = ShapeToString(c.shape) + " axes " + ShapeToString(c.axes);
    Shape expected_shape;
    // ReduceSum, axes as an int64 input (empty axes: omit the input).
    std::vector<DeviceTensor> inputs = {x};
    if (!c.axes.empty()) {
      std::vector<double> axes(c.axes.begin(), c.axes.end());
      inputs.push_back(
          runner.MakeTensor(DataType::kInt64, {static_cast<int64_t>(axes.size())}, axes));
    }
    StatusOr<std::vector<DeviceTensor>> sum =
        runner.Run("", "ReduceSum", inputs, 1, {Attr("keepdims", c.keepdims ? 1 : 0)});
    ASSERT_TRUE(sum.ok()) << what << ": " << sum.status().ToString();
    std::vector<double> expected =
        Reference(Values(x), c.shape, c.axes, c.keepdims, false, &expected_shape);
    EXPECT_EQ((*sum)[0].shape(), expected_shape) << what;
    // One rounding of the result, plus (in double) the summation order.
    const double n = static_cast<double>(NumElements(c.shape) /
                                         std::max<int64_t>(1, NumElements(expected_shape)));
    const double tol = UnitRoundoff(dtype) * (dtype == DataType::kFloat64 ? 2 * n : 1);
    ExpectNear(Values((*sum)[0]), expected, tol, tol, what);
    // ReduceMean, axes as attribute.
    std::vector<Attr> attrs = {Attr("keepdims", c.keepdims ? 1 : 0)};
    if (!c.axes.empty()) attrs.push_back(Attr("axes", c.axes));
    StatusOr<std::vector<DeviceTensor>> mean = runner.Run("", "ReduceMean", {x}, 1, attrs);
    ASSERT_TRUE(mean.ok()) << what << ": " << mean.status().ToString();
    expected = Reference(Values(x), c.shape, c.axes, c.keepdims, true, &expected_shape);
    EXPECT_EQ((*mean)[0].shape(), expected_shape) << what;
    ExpectNear(Values((*mean)[0]), expected, tol, tol, what);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ReduceTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// noop_with_empty_axes = 1 with no axes is the identity; keepdims defaults to 1.
TEST(ReduceOptionsTest, NoopWithEmptyAxesIsIdentity) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 2}, {1, 2, 3, 4});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "ReduceSum", {x}, 1, {Attr("noop_with_empty_axes", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 2, 3, 4}));
  out = runner.Run("", "ReduceSum", {x}, 1);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{10}));
}

// Integer sums are exact; repeated or out-of-range axes are refused.
TEST(ReduceOptionsTest, IntegerSumAndBadAxes) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kInt64, {2, 3}, {1, 2, 3, 4, 5, 6});
  DeviceTensor axes = runner.MakeTensor(DataType::kInt64, {1}, {1});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "ReduceSum", {x, axes}, 1, {Attr("keepdims", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{6, 15}));
  DeviceTensor twice = runner.MakeTensor(DataType::kInt64, {2}, {1, -1});
  EXPECT_FALSE(runner.Run("", "ReduceSum", {x, twice}, 1).ok());
  EXPECT_FALSE(runner
                   .Run("", "ReduceMean", {runner.MakeTensor(DataType::kFloat32, {2}, {1, 2})}, 1,
                        {Attr("axes", std::vector<int64_t>{1})})
                   .ok());
}

}  // namespace
}  // namespace zerograph::runtime
