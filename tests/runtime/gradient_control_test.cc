#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;
using testing::Values;

// Σ x² in double, over the values each tensor holds.
double ReferenceSumOfSquares(const std::vector<DeviceTensor>& tensors) {
  double sum = 0;
  for (const DeviceTensor& t : tensors) {
    for (double v : Values(t)) sum += v * v;
  }
  return sum;
}

// SumOfSquares over inputs of three dtypes and odd sizes (a tail after the 8 lanes) is the
// double sum, rounded once to fp32; the output is an fp32 scalar.
TEST(SumOfSquaresTest, SumsMixedDtypes) {
  KernelRunner runner;
  const std::vector<DeviceTensor> inputs = {runner.Random(DataType::kFloat32, {3, 7}, 1),
                                            runner.Random(DataType::kFloat16, {1001}, 2, -4, 4),
                                            runner.Random(DataType::kBFloat16, {5}, 3, -100, 100)};
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "SumOfSquares", inputs, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].dtype(), DataType::kFloat32);
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_EQ(Values((*out)[0])[0], static_cast<float>(ReferenceSumOfSquares(inputs)));
}

// One inf or NaN element anywhere makes the sum non-finite; an fp16 overflow of x² does not
// happen (squares are taken in double).
TEST(SumOfSquaresTest, NonFiniteInputsGiveANonFiniteSum) {
  KernelRunner runner;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {inf, -inf, nan}) {
    std::vector<double> values(37, 0.5);
    values[29] = bad;
    const std::vector<DeviceTensor> inputs = {runner.Random(DataType::kFloat32, {4}, 4),
                                              runner.MakeTensor(DataType::kFloat16, {37}, values)};
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run(kZerographDomain, "SumOfSquares", inputs, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_FALSE(std::isfinite(Values((*out)[0])[0])) << bad;
  }
  const std::vector<DeviceTensor> large = {
      runner.MakeTensor(DataType::kFloat16, {2}, {60000, -60000})};
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "SumOfSquares", large, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0])[0], static_cast<float>(2 * 60000.0 * 60000.0));
}

struct Control {
  std::vector<double> control;
  double new_scale = 0;
  double new_good_steps = 0;
};

// The op's semantics, written out in double (docs/formats.md; PyTorch's clip_grad_norm_ and
// GradScaler.update).
Control ReferenceControl(double s, bool scaled, double scale, double good, double max_norm,
                         double growth, double backoff, double interval) {
  const double sc = scaled ? scale : 1;
  const bool finite = std::isfinite(s);
  const double norm = std::sqrt(s) / sc;
  const double clip = max_norm > 0 && finite ? std::min(1.0, max_norm / (norm + 1e-6)) : 1;
  Control c;
  c.control = {static_cast<float>(clip / sc), scaled && !finite ? 1.0 : 0.0,
               static_cast<float>(norm)};
  if (!finite) {
    c.new_scale = static_cast<float>(sc * backoff);
  } else if (good + 1 >= interval) {
    c.new_scale = static_cast<float>(sc * growth);
  } else {
    c.new_scale = sc;
    c.new_good_steps = good + 1;
  }
  return c;
}

// GradientControl's cases: no scaling with and without clipping, a norm under max_norm (no
// clip), an overflow (skip and back off), a finite step (one more good step) and the step that
// reaches growth_interval (grow, count from 0). The attributes are non-default throughout.
TEST(GradientControlTest, MatchesReference) {
  KernelRunner runner;
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::string name;
    double s;
    bool scaled;
    double scale, good, max_norm;
  };
  const std::vector<Case> cases = {
      {"unscaled", 16, false, 1, 0, 0},
      {"unscaled clipped", 16, false, 1, 0, 1.5},
      {"unscaled under max_norm", 16, false, 1, 0, 10},
      {"overflow", inf, true, 1024, 7, 1},
      {"nan", std::numeric_limits<double>::quiet_NaN(), true, 1024, 7, 0},
      {"good step", 4096.0 * 4096.0 * 9, true, 4096, 7, 0},
      {"clipped good step", 4096.0 * 4096.0 * 9, true, 4096, 7, 2},
      {"growth", 256, true, 8, 9, 0},
  };
  const double growth = 3, backoff = 0.25, interval = 10;
  for (const Case& c : cases) {
    std::vector<DeviceTensor> inputs = {runner.MakeTensor(DataType::kFloat32, {}, {c.s})};
    if (c.scaled) {
      inputs.push_back(runner.MakeTensor(DataType::kFloat32, {}, {c.scale}));
      inputs.push_back(runner.MakeTensor(DataType::kFloat32, {}, {c.good}));
    }
    const std::vector<Attr> attrs = {Attr("max_norm", c.max_norm), Attr("growth_factor", growth),
                                     Attr("backoff_factor", backoff),
                                     Attr("growth_interval", int64_t{10})};
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run(kZerographDomain, "GradientControl", inputs, c.scaled ? 3 : 1, attrs);
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.status().ToString();
    const Control expected =
        ReferenceControl(c.s, c.scaled, c.scale, c.good, c.max_norm, growth, backoff, interval);
    const std::vector<double> control = Values((*out)[0]);
    ASSERT_EQ(control.size(), 3u) << c.name;
    EXPECT_EQ(control[0], expected.control[0]) << c.name;
    EXPECT_EQ(control[1], expected.control[1]) << c.name;
    if (std::isfinite(c.s)) {
      EXPECT_EQ(control[2], expected.control[2]) << c.name;
    } else {
      EXPECT_FALSE(std::isfinite(control[2])) << c.name;
    }
    if (c.scaled) {
      EXPECT_EQ(Values((*out)[1])[0], expected.new_scale) << c.name;
      EXPECT_EQ(Values((*out)[2])[0], expected.new_good_steps) << c.name;
    }
  }
}

// Spot values of the cases above, so the reference is not just the kernel written twice: an
// overflow skips, halves (backoff 0.5) and resets; a clip to max_norm 1 of norm 3 at scale 4.
TEST(GradientControlTest, KnownValues) {
  KernelRunner runner;
  auto scalar = [&](double v) { return runner.MakeTensor(DataType::kFloat32, {}, {v}); };
  StatusOr<std::vector<DeviceTensor>> overflow =
      runner.Run(kZerographDomain, "GradientControl",
                 {scalar(std::numeric_limits<double>::infinity()), scalar(65536), scalar(5)}, 3);
  ASSERT_TRUE(overflow.ok()) << overflow.status().ToString();
  EXPECT_EQ(Values((*overflow)[0])[1], 1);
  EXPECT_EQ(Values((*overflow)[1])[0], 32768);
  EXPECT_EQ(Values((*overflow)[2])[0], 0);
  // sum of squares of the scaled gradients 144 = (3·4)²: norm 3, clip 1/(3 + 1e-6).
  StatusOr<std::vector<DeviceTensor>> clip =
      runner.Run(kZerographDomain, "GradientControl", {scalar(144), scalar(4), scalar(0)}, 3,
                 {Attr("max_norm", 1.0)});
  ASSERT_TRUE(clip.ok()) << clip.status().ToString();
  const std::vector<double> control = Values((*clip)[0]);
  EXPECT_FLOAT_EQ(control[0], 1 / (3 + 1e-6) / 4);
  EXPECT_EQ(control[1], 0);
  EXPECT_EQ(control[2], 3);
  EXPECT_EQ(Values((*clip)[1])[0], 4);
  EXPECT_EQ(Values((*clip)[2])[0], 1);
}

}  // namespace
}  // namespace zerograph::runtime
