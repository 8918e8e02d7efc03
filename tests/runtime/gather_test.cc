// The indexed kernels (kernels/gather_shapes.h): Gather, GatherElements, ScatterElements, Trilu
// against index references, ONNX Runtime's GatherGrad against central differences of Gather, and
// out-of-range indices refused at run time with the node's name.

#include <algorithm>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;
using testing::NumericGradient;
using testing::Unravel;
using testing::Values;

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

// Gather on each axis, negative indices and int32 indices, against index arithmetic.
TEST(GatherTest, MatchesIndexReference) {
  KernelRunner runner;
  const Shape shape = {3, 4, 2};
  for (DataType dtype : {DataType::kFloat32, DataType::kInt8, DataType::kFloat16}) {
    DeviceTensor x = runner.MakeTensor(dtype, shape, Iota(24));
    for (DataType index_dtype : {DataType::kInt64, DataType::kInt32}) {
      for (int64_t axis : {0, 1, -1}) {
        const size_t d = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
        const std::vector<double> picks = {1, -1, 0, 1};
        DeviceTensor indices = runner.MakeTensor(index_dtype, {2, 2}, picks);
        StatusOr<std::vector<DeviceTensor>> out =
            runner.Run("", "Gather", {x, indices}, 1, {Attr("axis", axis)});
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        Shape out_shape(shape.begin(), shape.begin() + static_cast<int64_t>(d));
        out_shape.insert(out_shape.end(), {2, 2});
        out_shape.insert(out_shape.end(), shape.begin() + static_cast<int64_t>(d) + 1, shape.end());
        ASSERT_EQ((*out)[0].shape(), out_shape);
        std::vector<double> expected;
        for (int64_t i = 0; i < NumElements(out_shape); ++i) {
          const std::vector<int64_t> oi = Unravel(i, out_shape);
          std::vector<int64_t> ii(oi.begin(), oi.begin() + static_cast<int64_t>(d));
          int64_t pick = static_cast<int64_t>(picks[static_cast<size_t>(oi[d] * 2 + oi[d + 1])]);
          ii.push_back(pick < 0 ? pick + shape[d] : pick);
          ii.insert(ii.end(), oi.begin() + static_cast<int64_t>(d) + 2, oi.end());
          expected.push_back(static_cast<double>((ii[0] * 4 + ii[1]) * 2 + ii[2]));
        }
        EXPECT_EQ(Values((*out)[0]), expected) << "axis " << axis;
      }
    }
  }
}

// An index out of range is an InvalidArgument naming the node when the kernel runs.
TEST(GatherTest, IndexOutOfRangeIsAnError) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {3, 2}, Iota(6));
  for (double bad : {3.0, -4.0}) {
    DeviceTensor indices = runner.MakeTensor(DataType::kInt64, {2}, {0, bad});
    StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Gather", {x, indices}, 1);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    const std::string message = out.status().ToString();
    EXPECT_NE(message.find("(Gather)"), std::string::npos) << message;
    EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  }
  DeviceTensor indices = runner.MakeTensor(DataType::kInt64, {2, 2}, {0, 0, 0, 3});
  EXPECT_FALSE(runner.Run("", "GatherElements", {x, indices}, 1, {Attr("axis", 0)}).ok());
  EXPECT_FALSE(runner.Run("", "ScatterElements", {x, indices, x.Reshape({2, 3}).value()}, 1).ok());
}

TEST(GatherElementsTest, MatchesOnnxExample) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kInt32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  DeviceTensor indices = runner.MakeTensor(DataType::kInt64, {2, 3}, {1, 2, 0, 2, 0, -3});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "GatherElements", {x, indices}, 1, {Attr("axis", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{4, 8, 3, 7, 2, 3}));
  out = runner.Run("", "GatherElements", {x, indices}, 1, {Attr("axis", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{2, 3, 1, 6, 4, 4}));
}

// ScatterElements with each reduction; repeated indices combine in order.
TEST(ScatterElementsTest, Reductions) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {1, 5}, {1, 2, 3, 4, 5});
  DeviceTensor indices = runner.MakeTensor(DataType::kInt64, {1, 3}, {1, 3, 1});
  DeviceTensor updates = runner.MakeTensor(DataType::kFloat32, {1, 3}, {10, 0.5, 3});
  struct Case {
    const char* reduction;
    std::vector<double> expected;
  };
  for (const Case& c : std::vector<Case>{{"none", {1, 3, 3, 0.5, 5}},
                                         {"add", {1, 15, 3, 4.5, 5}},
                                         {"mul", {1, 60, 3, 2, 5}},
                                         {"max", {1, 10, 3, 4, 5}},
                                         {"min", {1, 2, 3, 0.5, 5}}}) {
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run("", "ScatterElements", {x, indices, updates}, 1,
                   {Attr("axis", 1), Attr("reduction", c.reduction)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values((*out)[0]), c.expected) << c.reduction;
  }
}

TEST(TriluTest, UpperAndLowerWithK) {
  KernelRunner runner;
  const Shape shape = {2, 3, 4};
  DeviceTensor x = runner.MakeTensor(DataType::kInt64, shape, Iota(24));
  for (int upper : {0, 1}) {
    for (double k : {-4.0, -1.0, 0.0, 2.0, 5.0}) {
      DeviceTensor kt = runner.MakeTensor(DataType::kInt64, {}, {k});
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run("", "Trilu", {x, kt}, 1, {Attr("upper", upper)});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<double> expected;
      for (int64_t i = 0; i < 24; ++i) {
        const std::vector<int64_t> index = Unravel(i, shape);
        const int64_t diagonal = index[2] - index[1];
        const bool keep = upper ? diagonal >= k : diagonal <= k;
        expected.push_back(keep ? static_cast<double>(i) : 0.0);
      }
      EXPECT_EQ(Values((*out)[0]), expected) << "upper " << upper << " k " << k;
    }
  }
}

// GatherGrad is the gradient of Gather: for f(x) = Σ w·Gather(x, indices), df/dx is
// GatherGrad(shape(x), indices, w); repeated and negative indices, axis 0 and 1.
TEST(GatherGradTest, MatchesCentralDifferencesOfGather) {
  KernelRunner runner;
  const Shape shape = {3, 4, 2};
  for (int64_t axis : {0, 1, -2}) {
    const size_t d = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    DeviceTensor indices = runner.MakeTensor(DataType::kInt64, {4}, {1, -1, 1, 0});
    DeviceTensor x0 = runner.Random(DataType::kFloat64, shape, 7);
    StatusOr<std::vector<DeviceTensor>> y0 =
        runner.Run("", "Gather", {x0, indices}, 1, {Attr("axis", axis)});
    ASSERT_TRUE(y0.ok()) << y0.status().ToString();
    DeviceTensor w = runner.Random(DataType::kFloat64, (*y0)[0].shape(), 11);
    const std::vector<double> weights = Values(w);
    auto f = [&](const std::vector<double>& x) {
      DeviceTensor xt = runner.MakeTensor(DataType::kFloat64, shape, x);
      StatusOr<std::vector<DeviceTensor>> y =
          runner.Run("", "Gather", {xt, indices}, 1, {Attr("axis", axis)});
      const std::vector<double> values = Values((*y)[0]);
      return std::inner_product(values.begin(), values.end(), weights.begin(), 0.0);
    };
    const std::vector<double> numeric = NumericGradient(f, Values(x0));
    DeviceTensor shape_tensor =
        runner.MakeTensor(DataType::kInt64, {3},
                          {static_cast<double>(shape[0]), static_cast<double>(shape[1]),
                           static_cast<double>(shape[2])});
    StatusOr<std::vector<DeviceTensor>> dx = runner.Run(
        "com.microsoft", "GatherGrad", {shape_tensor, indices, w}, 1, {Attr("axis", axis)});
    ASSERT_TRUE(dx.ok()) << dx.status().ToString();
    ASSERT_EQ((*dx)[0].shape(), shape);
    testing::ExpectNear(Values((*dx)[0]), numeric, 1e-6, 1e-8, "axis " + std::to_string(d));
  }
  // float32 and float16 agree with the double result.
  DeviceTensor indices = runner.MakeTensor(DataType::kInt32, {3}, {2, 2, 0});
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DeviceTensor dy = runner.MakeTensor(dtype, {3, 2}, {1, 2, 3, 4, 5, 6});
    DeviceTensor shape_tensor = runner.MakeTensor(DataType::kInt64, {2}, {3, 2});
    StatusOr<std::vector<DeviceTensor>> dx =
        runner.Run("com.microsoft", "GatherGrad", {shape_tensor, indices, dy}, 1);
    ASSERT_TRUE(dx.ok()) << dx.status().ToString();
    EXPECT_EQ(Values((*dx)[0]), (std::vector<double>{5, 6, 0, 0, 4, 6}));
  }
}

}  // namespace
}  // namespace zerograph::runtime
