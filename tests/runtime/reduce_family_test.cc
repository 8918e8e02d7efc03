// ONNX's reductions beyond the sum and mean (reduce_test.cc), ArgMax/ArgMin and ONNX Runtime's
// ReduceSumTraining against references computed here in double.

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
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

// What an op does to the values of one output, in double.
using Fold = std::function<double(const std::vector<double>&)>;

double Sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

struct Reduction {
  std::string name;
  Fold fold;
  bool on_integers;  // exact on int32/int64 (the others are tested on floats only)
};

const std::vector<Reduction>& Reductions() {
  static const std::vector<Reduction> kReductions = {
      {"ReduceSum", Sum, true},
      {"ReduceMean", [](const auto& v) { return Sum(v) / static_cast<double>(v.size()); }, false},
      {"ReduceMax", [](const auto& v) { return *std::max_element(v.begin(), v.end()); }, true},
      {"ReduceMin", [](const auto& v) { return *std::min_element(v.begin(), v.end()); }, true},
      {"ReduceProd",
       [](const auto& v) {
         double p = 1;
         for (double x : v) p *= x;
         return p;
       },
       true},
      {"ReduceSumSquare",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return s;
       },
       true},
      {"ReduceL1",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += std::abs(x);
         return s;
       },
       true},
      {"ReduceL2",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return std::sqrt(s);
       },
       false},
      {"ReduceLogSum", [](const auto& v) { return std::log(Sum(v)); }, false},
      {"ReduceLogSumExp",
       [](const auto& v) {
         const double m = *std::max_element(v.begin(), v.end());
         double s = 0;
         for (double x : v) s += std::exp(x - m);
         return m + std::log(s);
       },
       false},
  };
  return kReductions;
}

// `fold` of x over `axes` (every axis when empty); the output shape keeps reduced axes as 1 or
// drops them.
std::vector<double> Reference(const std::vector<double>& x, const Shape& shape,
                              const std::vector<int64_t>& axes, bool keepdims, const Fold& fold,
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
  std::vector<std::vector<double>> groups(static_cast<size_t>(NumElements(kept)));
  for (int64_t i = 0; i < NumElements(shape); ++i) {
    std::vector<int64_t> index = Unravel(i, shape);
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) o = o * kept[d] + (reduced[d] ? 0 : index[d]);
    groups[static_cast<size_t>(o)].push_back(x[static_cast<size_t>(i)]);
  }
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(fold(g));
  return out;
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

bool IsInteger(DataType dtype) { return dtype == DataType::kInt32 || dtype == DataType::kInt64; }

class ReduceFamilyTest : public ::testing::TestWithParam<DataType> {};

// Every reduction at opset 13 (axes as attribute) and 18 (axes as input), keepdims both ways,
// negative axes, a reduced axis of size 1, and everything reduced when axes are empty.
TEST_P(ReduceFamilyTest, MatchesReference) {
  const DataType dtype = GetParam();
  uint32_t seed = 70;
  for (const Reduction& op : Reductions()) {
    if (IsInteger(dtype) && !op.on_integers) continue;
    for (int64_t opset : {13, 18}) {
      KernelRunner runner;
      runner.set_opset(opset);
      for (const ReduceCase& c : kCases) {
        // Positive values keep the logs defined; integers small enough that products fit.
        DeviceTensor x = IsInteger(dtype) ? runner.Random(dtype, c.shape, seed++, 1, 3)
                                          : runner.Random(dtype, c.shape, seed++, 0.25, 2);
        const std::string what = op.name + "-" + std::to_string(opset) + " " +
                                 ShapeToString(c.shape) + " axes " + ShapeToString(c.axes) +
                                 (c.keepdims ? " keepdims" : "");
        std::vector<DeviceTensor> inputs = {x};
        std::vector<Attr> attrs = {Attr("keepdims", c.keepdims ? 1 : 0)};
        if (!c.axes.empty() && opset >= 18) {
          inputs.push_back(runner.MakeTensor(DataType::kInt64,
                                             {static_cast<int64_t>(c.axes.size())},
                                             std::vector<double>(c.axes.begin(), c.axes.end())));
        } else if (!c.axes.empty()) {
          attrs.push_back(Attr("axes", c.axes));
        }
        StatusOr<std::vector<DeviceTensor>> out = runner.Run("", op.name, inputs, 1, attrs);
        ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
        Shape expected_shape;
        const std::vector<double> expected =
            Reference(Values(x), c.shape, c.axes, c.keepdims, op.fold, &expected_shape);
        EXPECT_EQ((*out)[0].shape(), expected_shape) << what;
        // One rounding of the result (double: the order of the sums too).
        const double tol =
            IsInteger(dtype) ? 0 : 4 * UnitRoundoff(dtype) * (dtype == DataType::kFloat64 ? 64 : 1);
        ExpectNear(Values((*out)[0]), expected, tol, tol, what);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ReduceFamilyTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16,
                                           DataType::kInt32, DataType::kInt64),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// The sum of exp() of large inputs does not overflow: the maximum is factored out.
TEST(ReduceFamilyOptionsTest, LogSumExpIsStable) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 2}, {1000, 1000, -1000, -1001});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(
      "", "ReduceLogSumExp", {x}, 1, {Attr("axes", std::vector<int64_t>{1}), Attr("keepdims", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(Values((*out)[0]), {1000 + std::log(2.0), -1000 + std::log(1 + std::exp(-1.0))}, 1e-6,
             0);
}

// Opset 18: an empty axes input reduces everything, or nothing with noop_with_empty_axes; a
// reduced axis of size 1 still applies the op (ReduceSumSquare squares).
TEST(ReduceFamilyOptionsTest, EmptyAxesAndSizeOneAxis) {
  KernelRunner runner;
  runner.set_opset(18);
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 1}, {-2, 3});
  DeviceTensor none = runner.MakeTensor(DataType::kInt64, {0}, {});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "ReduceSumSquare", {x, none}, 1, {Attr("keepdims", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), Shape{});
  EXPECT_EQ(Values((*out)[0]), std::vector<double>{13});
  out = runner.Run("", "ReduceSumSquare", {x, none}, 1, {Attr("noop_with_empty_axes", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{-2, 3}));
  DeviceTensor axis1 = runner.MakeTensor(DataType::kInt64, {1}, {1});
  out = runner.Run("", "ReduceSumSquare", {x, axis1}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{4, 9}));
}

// Reducing an empty set gives each op's identity (ONNX 18's empty-set tests): 0 for the sums, 1
// for the product, -inf for the maximum and the logs, +inf for the minimum.
TEST(ReduceFamilyOptionsTest, EmptySetGivesTheIdentity) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 0, 3}, {});
  const std::vector<std::pair<std::string, double>> identities = {
      {"ReduceSum", 0},        {"ReduceSumSquare", 0},      {"ReduceL1", 0},
      {"ReduceL2", 0},         {"ReduceProd", 1},           {"ReduceMax", -INFINITY},
      {"ReduceMin", INFINITY}, {"ReduceLogSum", -INFINITY}, {"ReduceLogSumExp", -INFINITY}};
  for (const auto& [op, identity] : identities) {
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run("", op, {x}, 1, {Attr("axes", std::vector<int64_t>{1}), Attr("keepdims", 0)});
    ASSERT_TRUE(out.ok()) << op << ": " << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3})) << op;
    EXPECT_EQ(Values((*out)[0]), std::vector<double>(6, identity)) << op;
  }
}

// ReduceSumTraining (com.microsoft) is ReduceSum-13 with its axes input required.
TEST(ReduceFamilyOptionsTest, ReduceSumTraining) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  DeviceTensor axes = runner.MakeTensor(DataType::kInt64, {1}, {0});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("com.microsoft", "ReduceSumTraining", {x, axes}, 1, {Attr("keepdims", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{5, 7, 9}));
  DeviceTensor none = runner.MakeTensor(DataType::kInt64, {0}, {});
  out = runner.Run("com.microsoft", "ReduceSumTraining", {x, none}, 1,
                   {Attr("noop_with_empty_axes", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// ArgMax/ArgMin along an axis that is not last, ties first or last, keepdims both ways.
TEST(ArgReduceTest, AxisTiesAndKeepdims) {
  KernelRunner runner;
  // [2, 3, 2]: along axis 1, column (0, 0) is 1 5 5, (0, 1) is 9 0 9.
  DeviceTensor x =
      runner.MakeTensor(DataType::kFloat32, {2, 3, 2}, {1, 9, 5, 0, 5, 9, 7, 7, 7, 7, -1, 8});
  struct Case {
    std::string op;
    int64_t last;
    std::vector<double> expected;
  };
  for (const Case& c : {Case{"ArgMax", 0, {1, 0, 0, 2}}, Case{"ArgMax", 1, {2, 2, 1, 2}},
                        Case{"ArgMin", 0, {0, 1, 2, 0}}, Case{"ArgMin", 1, {0, 1, 2, 1}}}) {
    const std::string what = c.op + " select_last_index " + std::to_string(c.last);
    for (int64_t keepdims : {0, 1}) {
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run("", c.op, {x}, 1,
                     {Attr("axis", int64_t{-2}), Attr("keepdims", keepdims),
                      Attr("select_last_index", c.last)});
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      EXPECT_EQ((*out)[0].dtype(), DataType::kInt64);
      EXPECT_EQ((*out)[0].shape(), keepdims ? (Shape{2, 1, 2}) : (Shape{2, 2})) << what;
      EXPECT_EQ(Values((*out)[0]), c.expected) << what;
    }
  }
  // The default axis is 0.
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "ArgMax", {runner.MakeTensor(DataType::kInt64, {3}, {4, 8, 2})}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), Shape{1});
  EXPECT_EQ(Values((*out)[0]), std::vector<double>{1});
}

// An axis past the rank is refused before running, naming the node.
TEST(ArgReduceTest, AxisOutOfRangeIsRefused) {
  KernelRunner runner;
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(
      "", "ArgMin", {runner.MakeTensor(DataType::kFloat32, {2}, {1, 2})}, 1, {Attr("axis", 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("ArgMin"), std::string::npos) << out.status().ToString();
}

}  // namespace
}  // namespace zerograph::runtime
