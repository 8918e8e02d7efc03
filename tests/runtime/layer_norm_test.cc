// LayerNormalization and SimplifiedLayerNormalization against references in double, and their
// gradients (com.microsoft) against central differences of the forward ops.

#include <cmath>
#include <string>
#include <utility>
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

struct Normalized {
  std::vector<double> y, mean, inv_std;
};

// Rows of n: y = (x - mean) · inv_std · scale + bias, scale and bias given per element of a row
// (rms: no mean, no bias).
Normalized Reference(const std::vector<double>& x, int64_t n, const std::vector<double>& scale,
                     const std::vector<double>& bias, double epsilon, bool rms) {
  Normalized out;
  for (size_t r = 0; r * static_cast<size_t>(n) < x.size(); ++r) {
    const double* row = x.data() + r * static_cast<size_t>(n);
    double mean = 0, var = 0;
    if (!rms) {
      for (int64_t j = 0; j < n; ++j) mean += row[j] / static_cast<double>(n);
    }
    for (int64_t j = 0; j < n; ++j)
      var += (row[j] - mean) * (row[j] - mean) / static_cast<double>(n);
    const double inv = 1 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = static_cast<size_t>(j);
      out.y.push_back((row[j] - mean) * inv * scale[i] + (bias.empty() ? 0 : bias[i]));
    }
    out.mean.push_back(mean);
    out.inv_std.push_back(inv);
  }
  return out;
}

struct LayerNormCase {
  int64_t axis;
  Shape scale_shape;  // broadcast over the normalized dimensions of [2, 3, 4]
  bool bias;
};

class LayerNormTest : public ::testing::TestWithParam<DataType> {};

TEST_P(LayerNormTest, MatchesReference) {
  const DataType dtype = GetParam();
  const Shape shape = {2, 3, 4};
  uint32_t seed = 30;
  for (const LayerNormCase& c :
       {LayerNormCase{-1, {4}, true}, LayerNormCase{1, {3, 4}, true}, LayerNormCase{1, {4}, false},
        LayerNormCase{0, {1, 1, 4}, true}, LayerNormCase{2, {1}, false}}) {
    KernelRunner runner;
    const int64_t n = c.axis == -1 ? 4 : c.axis == 0 ? 24 : c.axis == 1 ? 12 : 4;
    DeviceTensor x = runner.Random(dtype, shape, seed++, -3, 3);
    DeviceTensor scale = runner.Random(dtype, c.scale_shape, seed++, 0.5, 2);
    DeviceTensor bias = runner.Random(dtype, c.scale_shape, seed++, -1, 1);
    // The parameters per element of a row.
    auto expand = [&](const DeviceTensor& p) {
      std::vector<double> v = Values(p), out;
      for (int64_t j = 0; j < n; ++j) out.push_back(v[static_cast<size_t>(j % p.numel())]);
      return out;
    };
    const std::string what = "axis " + std::to_string(c.axis) + " scale " +
                             ShapeToString(c.scale_shape) + (c.bias ? " bias" : "");
    for (bool rms : {false, true}) {
      std::vector<DeviceTensor> inputs = {x, scale};
      if (c.bias && !rms) inputs.push_back(bias);
      StatusOr<std::vector<DeviceTensor>> out =
          rms ? runner.Run("com.microsoft", "SimplifiedLayerNormalization", inputs, 2,
                           {Attr("axis", c.axis), Attr("epsilon", 1e-3f)})
              : runner.Run("", "LayerNormalization", inputs, 3,
                           {Attr("axis", c.axis), Attr("epsilon", 1e-3f)});
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      const Normalized expected = Reference(Values(x), n, expand(scale),
                                            c.bias && !rms ? expand(bias) : std::vector<double>{},
                                            static_cast<double>(1e-3f), rms);
      const double tol = 8 * UnitRoundoff(dtype);
      ExpectNear(Values((*out)[0]), expected.y, tol, tol, what);
      const DeviceTensor& inv = (*out)[rms ? 1 : 2];
      EXPECT_EQ(inv.dtype(), DataType::kFloat32);
      EXPECT_EQ(inv.numel(), static_cast<int64_t>(expected.inv_std.size()));
      ExpectNear(Values(inv), expected.inv_std, 1e-6, 1e-7, what + " inv_std");
      if (!rms) ExpectNear(Values((*out)[1]), expected.mean, 1e-6, 1e-6, what + " mean");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LayerNormTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// Only Y: the statistics outputs are optional.
TEST(LayerNormOptionsTest, StatisticsAreOptional) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 2}, {1, 3, -1, 1});
  DeviceTensor scale = runner.MakeTensor(DataType::kFloat32, {2}, {1, 2});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "LayerNormalization", {x, scale}, 1, {Attr("epsilon", 0.0f)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(Values((*out)[0]), {-1, 2, -1, 2}, 1e-6, 1e-6);
}

// A scale that does not broadcast over the normalized dimensions is refused.
TEST(LayerNormOptionsTest, MismatchedScaleIsRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 2}, {1, 3, -1, 1});
  DeviceTensor scale = runner.MakeTensor(DataType::kFloat32, {3}, {1, 2, 3});
  EXPECT_FALSE(runner.Run("", "LayerNormalization", {x, scale}, 1).ok());
}

// The gradients of Σ w·LayerNorm(x; scale, bias) (and of the RMS norm) by central differences of
// the double forward kernel; the statistics inputs are the forward's fp32 outputs, hence the
// tolerance of 1e-5.
TEST(LayerNormGradTest, MatchesFiniteDifferences) {
  KernelRunner runner;
  const Shape shape = {3, 2, 4};
  const DataType f64 = DataType::kFloat64;
  // Per element of a row, and (axis 1, scale [4]) broadcast over the normalized [2, 4].
  for (const auto& [axis, param_shape] :
       std::vector<std::pair<int64_t, Shape>>{{-1, {4}}, {1, {2, 4}}, {1, {4}}}) {
    const std::vector<double> x0 = Values(runner.Random(f64, shape, 41, -2, 2));
    const std::vector<double> scale0 = Values(runner.Random(f64, param_shape, 42, 0.5, 2));
    const std::vector<double> bias0 = Values(runner.Random(f64, param_shape, 43, -1, 1));
    const DeviceTensor w = runner.Random(f64, shape, 44, -1, 1);
    for (bool rms : {false, true}) {
      const std::string what =
          std::string(rms ? "SimplifiedLayerNormalizationGrad" : "LayerNormalizationGrad") +
          " axis " + std::to_string(axis);
      const std::vector<Attr> attrs = {Attr("axis", axis), Attr("epsilon", 1e-2f)};
      auto forward = [&](const std::vector<double>& x, const std::vector<double>& scale,
                         const std::vector<double>& bias) {
        std::vector<DeviceTensor> inputs = {runner.MakeTensor(f64, shape, x),
                                            runner.MakeTensor(f64, param_shape, scale)};
        if (!rms) inputs.push_back(runner.MakeTensor(f64, param_shape, bias));
        StatusOr<std::vector<DeviceTensor>> out =
            rms ? runner.Run("com.microsoft", "SimplifiedLayerNormalization", inputs, 2, attrs)
                : runner.Run("", "LayerNormalization", inputs, 3, attrs);
        EXPECT_TRUE(out.ok()) << out.status().ToString();
        return std::move(*out);
      };
      auto loss = [&](const std::vector<double>& y) {
        const std::vector<double> wv = Values(w);
        double s = 0;
        for (size_t i = 0; i < y.size(); ++i) s += wv[i] * y[i];
        return s;
      };
      const std::vector<DeviceTensor> y0 = forward(x0, scale0, bias0);
      std::vector<DeviceTensor> inputs = {w, runner.MakeTensor(f64, shape, x0),
                                          runner.MakeTensor(f64, param_shape, scale0)};
      if (!rms) inputs.push_back(y0[1]);
      inputs.push_back(y0[rms ? 1 : 2]);
      StatusOr<std::vector<DeviceTensor>> grads =
          rms ? runner.Run("com.microsoft", "SimplifiedLayerNormalizationGrad", inputs, 2, attrs)
              : runner.Run("com.microsoft", "LayerNormalizationGrad", inputs, 3, attrs);
      ASSERT_TRUE(grads.ok()) << what << ": " << grads.status().ToString();
      ExpectNear(Values((*grads)[0]),
                 NumericGradient(
                     [&](const std::vector<double>& x) {
                       return loss(Values(forward(x, scale0, bias0)[0]));
                     },
                     x0),
                 1e-5, 1e-6, what + " X_grad");
      EXPECT_EQ((*grads)[1].shape(), param_shape);
      ExpectNear(
          Values((*grads)[1]),
          NumericGradient(
              [&](const std::vector<double>& s) { return loss(Values(forward(x0, s, bias0)[0])); },
              scale0),
          1e-5, 1e-6, what + " scale_grad");
      if (!rms) {
        ExpectNear(Values((*grads)[2]),
                   NumericGradient(
                       [&](const std::vector<double>& b) {
                         return loss(Values(forward(x0, scale0, b)[0]));
                       },
                       bias0),
                   1e-5, 1e-6, what + " bias_grad");
      }
    }
  }
}

// The fp32 and 16-bit gradient kernels agree with the double one to their precision.
TEST(LayerNormGradTest, NarrowDtypesMatchDouble) {
  KernelRunner runner;
  const Shape shape = {4, 8};
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DeviceTensor dy = runner.Random(dtype, shape, 51, -1, 1);
    DeviceTensor x = runner.Random(dtype, shape, 52, -2, 2);
    DeviceTensor scale = runner.Random(dtype, {8}, 53, 0.5, 2);
    DeviceTensor mean = runner.MakeTensor(DataType::kFloat32, {4, 1}, {0.1, -0.2, 0.3, 0});
    DeviceTensor inv = runner.MakeTensor(DataType::kFloat32, {4, 1}, {0.9, 1.1, 0.7, 1.3});
    auto wide = [&](const DeviceTensor& t) {
      return runner.MakeTensor(DataType::kFloat64, t.shape(), Values(t));
    };
    StatusOr<std::vector<DeviceTensor>> narrow =
        runner.Run("com.microsoft", "LayerNormalizationGrad", {dy, x, scale, mean, inv}, 3);
    StatusOr<std::vector<DeviceTensor>> reference = runner.Run(
        "com.microsoft", "LayerNormalizationGrad", {wide(dy), wide(x), wide(scale), mean, inv}, 3);
    ASSERT_TRUE(narrow.ok() && reference.ok());
    // One rounding of each output; the parameter gradients sum 4 rows.
    const double tol = 4 * UnitRoundoff(dtype);
    for (size_t i = 0; i < 3; ++i) {
      ExpectNear(Values((*narrow)[i]), Values((*reference)[i]), tol, 4 * tol,
                 std::string(DataTypeName(dtype)) + " output " + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace zerograph::runtime
