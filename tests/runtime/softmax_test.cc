// Softmax and LogSoftmax (both axis semantics) against references in double, and ONNX Runtime's
// SoftmaxGrad_13 / LogSoftmaxGrad_13 against central differences of the forward ops.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::NumericGradient;
using testing::UnitRoundoff;
using testing::Values;

// Softmax (or its log) of x seen as [outer, n, inner] along n.
std::vector<double> Reference(const std::vector<double>& x, int64_t outer, int64_t n, int64_t inner,
                              bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + j); };
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, x[at(k)]);
      for (int64_t k = 0; k < n; ++k) s += std::exp(x[at(k)] - m);
      for (int64_t k = 0; k < n; ++k) {
        y[at(k)] = log ? x[at(k)] - m - std::log(s) : std::exp(x[at(k)] - m) / s;
      }
    }
  }
  return y;
}

struct SoftmaxCase {
  int64_t opset;
  int64_t axis;
  // The layout the axis means at that opset, for the [2, 3, 4] input.
  int64_t outer, n, inner;
};

const std::vector<SoftmaxCase> kCases = {{13, -1, 6, 4, 1},
                                         {13, 1, 2, 3, 4},
                                         {13, 0, 1, 2, 12},
                                         {13, -3, 1, 2, 12},
                                         // Before 13: coerced to 2-D at the axis (default 1).
                                         {11, 1, 2, 12, 1},
                                         {11, 2, 6, 4, 1},
                                         {11, 0, 1, 24, 1},
                                         {1, -2, 2, 12, 1}};

class SoftmaxTest : public ::testing::TestWithParam<DataType> {};

TEST_P(SoftmaxTest, MatchesReference) {
  const DataType dtype = GetParam();
  uint32_t seed = 90;
  for (const SoftmaxCase& c : kCases) {
    KernelRunner runner;
    runner.set_opset_version(c.opset);
    DeviceTensor x = runner.Random(dtype, {2, 3, 4}, seed++, -5, 5);
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      const std::string what =
          std::string(op) + "-" + std::to_string(c.opset) + " axis " + std::to_string(c.axis);
      StatusOr<std::vector<DeviceTensor>> out = runner.Run("", op, {x}, 1, {Attr("axis", c.axis)});
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      const bool log = std::string(op) == "LogSoftmax";
      const double tol = 8 * UnitRoundoff(dtype) * (dtype == DataType::kFloat32 ? 4 : 1);
      ExpectNear(Values((*out)[0]), Reference(Values(x), c.outer, c.n, c.inner, log), tol, tol,
                 what);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SoftmaxTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// The default axis is 1 before opset 13 (the input coerced to [2, 12]) and -1 from 13.
TEST(SoftmaxOptionsTest, DefaultAxisFollowsOpset) {
  for (int64_t opset : {11, 13}) {
    KernelRunner runner;
    runner.set_opset_version(opset);
    DeviceTensor x = runner.Random(DataType::kFloat64, {2, 3, 4}, 7, -3, 3);
    StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Softmax", {x}, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<double> expected =
        opset >= 13 ? Reference(Values(x), 6, 4, 1, false) : Reference(Values(x), 2, 12, 1, false);
    ExpectNear(Values((*out)[0]), expected, 1e-14, 1e-15, "opset " + std::to_string(opset));
  }
}

// Inputs far beyond exp()'s range give the same result as the same inputs shifted to 0.
TEST(SoftmaxOptionsTest, LargeInputsAreStable) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 3}, {1000, 1001, 1002, -3, -2, -1});
  const std::vector<double> expected = Reference({0, 1, 2, 0, 1, 2}, 2, 3, 1, false);
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Softmax", {x}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(Values((*out)[0]), expected, 1e-6, 1e-7);
  out = runner.Run("", "LogSoftmax", {x}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(Values((*out)[0]), Reference({0, 1, 2, 0, 1, 2}, 2, 3, 1, true), 1e-6, 1e-6);
}

// fp32 rows long enough for the vector path (eight at a time, then a tail), with a causal mask's
// -inf and values far below the row's maximum: those come out exactly 0, the rest as the reference.
TEST(SoftmaxOptionsTest, MaskedFloatRowsAreExactZeros) {
  KernelRunner runner;
  const int64_t rows = 3, n = 21;
  std::vector<double> x = Values(runner.Random(DataType::kFloat32, {rows, n}, 31, -4, 4));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 5 + 4 * r; j < n; ++j) x[static_cast<size_t>(r * n + j)] = -INFINITY;
  }
  x[1] = -200;  // exp(-200 - max) underflows
  std::vector<double> expected = Reference(x, rows, n, 1, false);
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "Softmax", {runner.MakeTensor(DataType::kFloat32, {rows, n}, x)}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<double> y = Values((*out)[0]);
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isinf(x[i]) || i == 1) {
      EXPECT_EQ(y[i], 0.0) << "element " << i;
    }
  }
  ExpectNear(y, expected, 1e-6, 1e-7);
}

// SoftmaxGrad_13 on fp32 rows long enough for its eight-lane sum: dx = y·(dy - Σ dy·y).
TEST(SoftmaxGradTest, LongFloatRowsMatchReference) {
  KernelRunner runner;
  const int64_t rows = 2, n = 21;
  const std::vector<double> dy = Values(runner.Random(DataType::kFloat32, {rows, n}, 5, -1, 1));
  const std::vector<double> y = Values(runner.Random(DataType::kFloat32, {rows, n}, 6, 0, 0.1));
  std::vector<double> expected(dy.size());
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t j = 0; j < n; ++j)
      s += dy[static_cast<size_t>(r * n + j)] * y[static_cast<size_t>(r * n + j)];
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = static_cast<size_t>(r * n + j);
      expected[i] = y[i] * (dy[i] - s);
    }
  }
  StatusOr<std::vector<DeviceTensor>> dx =
      runner.Run("com.microsoft", "SoftmaxGrad_13",
                 {runner.MakeTensor(DataType::kFloat32, {rows, n}, dy),
                  runner.MakeTensor(DataType::kFloat32, {rows, n}, y)},
                 1);
  ASSERT_TRUE(dx.ok()) << dx.status().ToString();
  ExpectNear(Values((*dx)[0]), expected, 1e-6, 1e-7);
}

// An axis past the rank is refused, and the error names the node.
TEST(SoftmaxOptionsTest, AxisOutOfRangeNamesTheNode) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Node* node = runner.MakeNode("", "Softmax", {x}, 1, {Attr("axis", 2)});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(*node, {x});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find(node->name()), std::string::npos)
      << out.status().ToString();
  EXPECT_NE(out.status().ToString().find("axis"), std::string::npos) << out.status().ToString();
}

// dX of SoftmaxGrad_13 (LogSoftmaxGrad_13) is the gradient of Σ w·Softmax(x) (LogSoftmax) given
// dY = w and the forward's Y, along an axis that is not the last and along the last.
TEST(SoftmaxGradTest, MatchesFiniteDifferences) {
  KernelRunner runner;
  const Shape shape = {2, 3, 4};
  const std::vector<double> x0 = Values(runner.Random(DataType::kFloat64, shape, 11, -2, 2));
  const DeviceTensor w = runner.Random(DataType::kFloat64, shape, 12, -1, 1);
  for (int64_t axis : {1, -1}) {
    for (bool log : {false, true}) {
      const std::string forward = log ? "LogSoftmax" : "Softmax";
      const std::string what = forward + "Grad_13 axis " + std::to_string(axis);
      auto run_forward = [&](const std::vector<double>& x) {
        StatusOr<std::vector<DeviceTensor>> y =
            runner.Run("", forward, {runner.MakeTensor(DataType::kFloat64, shape, x)}, 1,
                       {Attr("axis", axis)});
        EXPECT_TRUE(y.ok()) << y.status().ToString();
        return std::move(*y)[0];
      };
      auto loss = [&](const std::vector<double>& x) {
        const std::vector<double> y = Values(run_forward(x));
        const std::vector<double> wv = Values(w);
        double s = 0;
        for (size_t i = 0; i < y.size(); ++i) s += wv[i] * y[i];
        return s;
      };
      StatusOr<std::vector<DeviceTensor>> dx = runner.Run(
          "com.microsoft", forward + "Grad_13", {w, run_forward(x0)}, 1, {Attr("axis", axis)});
      ASSERT_TRUE(dx.ok()) << what << ": " << dx.status().ToString();
      ExpectNear(Values((*dx)[0]), NumericGradient(loss, x0), 1e-7, 1e-8, what);
    }
  }
}

// The fp32 and 16-bit kernels agree with the double one to their precision.
TEST(SoftmaxGradTest, NarrowDtypesMatchDouble) {
  KernelRunner runner;
  const Shape shape = {3, 5};
  for (const char* op : {"SoftmaxGrad_13", "LogSoftmaxGrad_13"}) {
    const std::vector<double> dy = Values(runner.Random(DataType::kFloat64, shape, 3, -1, 1));
    // A softmax output: positive rows summing to 1 (the log for LogSoftmaxGrad).
    std::vector<double> y = Values(runner.Random(DataType::kFloat64, shape, 4, 0.1, 1));
    for (int64_t r = 0; r < 3; ++r) {
      double s = 0;
      for (int64_t j = 0; j < 5; ++j) s += y[static_cast<size_t>(r * 5 + j)];
      for (int64_t j = 0; j < 5; ++j) {
        double& v = y[static_cast<size_t>(r * 5 + j)];
        v = std::string(op) == "LogSoftmaxGrad_13" ? std::log(v / s) : v / s;
      }
    }
    for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      DeviceTensor dy_t = runner.MakeTensor(dtype, shape, dy);
      DeviceTensor y_t = runner.MakeTensor(dtype, shape, y);
      StatusOr<std::vector<DeviceTensor>> narrow = runner.Run("com.microsoft", op, {dy_t, y_t}, 1);
      StatusOr<std::vector<DeviceTensor>> wide =
          runner.Run("com.microsoft", op,
                     {runner.MakeTensor(DataType::kFloat64, shape, Values(dy_t)),
                      runner.MakeTensor(DataType::kFloat64, shape, Values(y_t))},
                     1);
      ASSERT_TRUE(narrow.ok() && wide.ok());
      const double tol = 16 * UnitRoundoff(dtype);
      ExpectNear(Values((*narrow)[0]), Values((*wide)[0]), tol, tol,
                 std::string(op) + " " + std::string(DataTypeName(dtype)));
    }
  }
}

}  // namespace
}  // namespace zerograph::runtime
