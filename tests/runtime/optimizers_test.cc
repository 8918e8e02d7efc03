#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::UnitRoundoff;
using testing::Values;

struct AdamWState {
  std::vector<double> x, m, v;
};

// docs/formats.md's AdamW, literally, in double:
//   X ← X·(1 − lr·wd); M ← β1·M + (1−β1)·G; V ← β2·V + (1−β2)·G²;
//   X ← X − lr·(M/(1−β1^t)) / (√(V/(1−β2^t)) + ε)
AdamWState ReferenceAdamW(AdamWState s, const std::vector<double>& g, double lr, int64_t t,
                          double b1, double b2, double eps, double wd) {
  for (size_t i = 0; i < g.size(); ++i) {
    s.x[i] *= 1 - lr * wd;
    s.m[i] = b1 * s.m[i] + (1 - b1) * g[i];
    s.v[i] = b2 * s.v[i] + (1 - b2) * g[i] * g[i];
    const double m_hat = s.m[i] / (1 - std::pow(b1, static_cast<double>(t)));
    const double v_hat = s.v[i] / (1 - std::pow(b2, static_cast<double>(t)));
    s.x[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
  }
  return s;
}

class AdamWTest : public ::testing::TestWithParam<DataType> {};

// The fused multi-tensor AdamW matches the formula of docs/formats.md for two tensors of different
// shapes, at steps 1 and 7, default and explicit attributes; copying and in-place outputs agree.
TEST_P(AdamWTest, MatchesDesignFormula) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  const std::vector<Shape> shapes = {{3, 5}, {37}};
  for (int64_t step : {1, 7}) {
    for (bool explicit_attrs : {false, true}) {
      const double b1 = explicit_attrs ? 0.8 : 0.9, b2 = explicit_attrs ? 0.95 : 0.999;
      const double eps = explicit_attrs ? 1e-3 : 1e-8, wd = explicit_attrs ? 0.1 : 0.01;
      const double lr = 0.05;
      std::vector<DeviceTensor> inputs = {runner.MakeTensor(DataType::kFloat32, {}, {lr}),
                                          runner.MakeTensor(DataType::kInt64, {}, {double(step)})};
      uint32_t seed = 10;
      for (int group = 0; group < 4; ++group) {
        for (const Shape& shape : shapes) {
          // V must be non-negative.
          inputs.push_back(runner.Random(dtype, shape, seed++, group == 3 ? 0 : -1, 1));
        }
      }
      std::vector<Attr> attrs;
      if (explicit_attrs) {
        attrs = {Attr("beta1", b1), Attr("beta2", b2), Attr("epsilon", eps),
                 Attr("weight_decay", wd)};
      }
      // Attributes are float32 in ONNX: the reference uses the rounded values.
      const double fb1 = static_cast<float>(b1), fb2 = static_cast<float>(b2);
      const double feps = static_cast<float>(eps), fwd = static_cast<float>(wd);
      for (bool in_place : {false, true}) {
        Node* node = runner.MakeNode(kZerographDomain, "AdamW", inputs, 6, attrs);
        std::vector<DeviceTensor> fresh = inputs;
        if (in_place) {  // copies, so the update can overwrite them
          for (size_t i = 2; i < fresh.size(); ++i) {
            fresh[i] = runner.MakeTensor(dtype, inputs[i].shape(), Values(inputs[i]));
          }
        }
        StatusOr<std::vector<DeviceTensor>> out = runner.Run(*node, fresh, /*alias=*/in_place);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        for (size_t i = 0; i < shapes.size(); ++i) {
          AdamWState expected =
              ReferenceAdamW({Values(inputs[2 + i]), Values(inputs[6 + i]), Values(inputs[8 + i])},
                             Values(inputs[4 + i]), lr, step, fb1, fb2, feps, fwd);
          const double rtol = 8 * UnitRoundoff(dtype);
          const std::string what = "tensor " + std::to_string(i) + " step " + std::to_string(step);
          ExpectNear(Values((*out)[i]), expected.x, rtol, rtol, what + " X");
          ExpectNear(Values((*out)[2 + i]), expected.m, rtol, rtol, what + " M");
          ExpectNear(Values((*out)[4 + i]), expected.v, rtol, rtol, what + " V");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AdamWTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat16,
                                           DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// ONNX Runtime's AdamWOptimizer (alpha = β1, beta = β2), literally, in double; bc = 1 without
// bias correction:
//   mode 0: X ← X − lr·wd·X; M, V as above; X ← X − lr·M / (bc1·(√(V/bc2) + ε))
//   mode 1: M, V as above; X ← X − (lr·√bc2/bc1)·M/(√V + ε); X ← X − lr·wd·X
AdamWState ReferenceOrtAdamW(AdamWState s, const std::vector<double>& g, double lr, int64_t t,
                             double b1, double b2, double eps, double wd, int mode,
                             bool correct_bias) {
  const double bc1 = correct_bias ? 1 - std::pow(b1, static_cast<double>(t)) : 1;
  const double bc2 = correct_bias ? 1 - std::pow(b2, static_cast<double>(t)) : 1;
  for (size_t i = 0; i < g.size(); ++i) {
    if (mode == 0) s.x[i] -= lr * wd * s.x[i];
    s.m[i] = b1 * s.m[i] + (1 - b1) * g[i];
    s.v[i] = b2 * s.v[i] + (1 - b2) * g[i] * g[i];
    if (mode == 0) {
      s.x[i] -= lr * s.m[i] / (bc1 * (std::sqrt(s.v[i] / bc2) + eps));
    } else {
      s.x[i] -= (lr * std::sqrt(bc2) / bc1) * s.m[i] / (std::sqrt(s.v[i]) + eps);
      s.x[i] -= lr * wd * s.x[i];
    }
  }
  return s;
}

// Both adam_mode forms, with and without bias correction, with weight decay, at steps 1 and 5,
// match ONNX Runtime's formulas; mode 1 differs from mode 0 by more than the tolerance, so the
// attribute is read.
TEST(AdamWModeTest, MatchesOnnxRuntimeFormulas) {
  KernelRunner runner;
  const double lr = 0.05, b1 = 0.8, b2 = 0.95, eps = 1e-3, wd = 0.1;
  const double fb1 = static_cast<float>(b1), fb2 = static_cast<float>(b2);
  const double feps = static_cast<float>(eps), fwd = static_cast<float>(wd);
  for (int64_t step : {1, 5}) {
    for (auto [mode, correct_bias] : {std::pair{0, true}, {1, true}, {1, false}}) {
      std::vector<DeviceTensor> inputs = {runner.MakeTensor(DataType::kFloat32, {}, {lr}),
                                          runner.MakeTensor(DataType::kInt64, {}, {double(step)})};
      for (int group = 0; group < 4; ++group) {
        inputs.push_back(
            runner.Random(DataType::kFloat32, {41}, 30 + group, group == 3 ? 0 : -1, 1));
      }
      const std::vector<Attr> attrs = {Attr("beta1", b1),
                                       Attr("beta2", b2),
                                       Attr("epsilon", eps),
                                       Attr("weight_decay", wd),
                                       Attr("adam_mode", int64_t{mode}),
                                       Attr("correct_bias", int64_t{correct_bias})};
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run(kZerographDomain, "AdamW", inputs, 3, attrs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const AdamWState before{Values(inputs[2]), Values(inputs[4]), Values(inputs[5])};
      const AdamWState expected = ReferenceOrtAdamW(before, Values(inputs[3]), lr, step, fb1, fb2,
                                                    feps, fwd, mode, correct_bias);
      const std::string what = "mode " + std::to_string(mode) + " correct_bias " +
                               std::to_string(correct_bias) + " step " + std::to_string(step);
      const double rtol = 8 * UnitRoundoff(DataType::kFloat32);
      ExpectNear(Values((*out)[0]), expected.x, rtol, rtol, what + " X");
      ExpectNear(Values((*out)[1]), expected.m, rtol, rtol, what + " M");
      ExpectNear(Values((*out)[2]), expected.v, rtol, rtol, what + " V");
      const AdamWState other = ReferenceOrtAdamW(before, Values(inputs[3]), lr, step, fb1, fb2,
                                                 feps, fwd, 1 - mode, true);
      double largest_gap = 0;
      for (size_t i = 0; i < other.x.size(); ++i) {
        largest_gap = std::max(largest_gap, std::abs(other.x[i] - expected.x[i]));
      }
      EXPECT_GT(largest_gap, 1e-4) << what;
    }
  }
}

// adam_mode outside {0, 1}, correct_bias outside {0, 1}, and PyTorch's form without bias
// correction are refused, naming the attribute.
TEST(AdamWModeTest, RefusesUnknownModes) {
  KernelRunner runner;
  std::vector<DeviceTensor> inputs = {runner.MakeTensor(DataType::kFloat32, {}, {0.1}),
                                      runner.MakeTensor(DataType::kInt64, {}, {1})};
  for (int i = 0; i < 4; ++i) inputs.push_back(runner.Random(DataType::kFloat32, {4}, i, 0, 1));
  const std::vector<std::pair<std::vector<Attr>, std::string>> cases = {
      {{Attr("adam_mode", int64_t{2})}, "adam_mode"},
      {{Attr("adam_mode", int64_t{1}), Attr("correct_bias", int64_t{3})}, "correct_bias"},
      {{Attr("adam_mode", int64_t{0}), Attr("correct_bias", int64_t{0})}, "requires correct_bias"},
  };
  for (const auto& [attrs, cause] : cases) {
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run(kZerographDomain, "AdamW", inputs, 3, attrs);
    ASSERT_FALSE(out.ok()) << cause;
    EXPECT_NE(out.status().message().find(cause), std::string_view::npos)
        << out.status().ToString();
  }
}

// Every X', M', V' may take its input's memory.
TEST(AdamWShapeTest, OutputsMayRunInPlace) {
  KernelRunner runner;
  std::vector<DeviceTensor> inputs = {runner.MakeTensor(DataType::kFloat32, {}, {0.1}),
                                      runner.MakeTensor(DataType::kInt64, {}, {1})};
  for (int i = 0; i < 4; ++i) inputs.push_back(runner.Random(DataType::kFloat32, {4}, i));
  Node* node = runner.MakeNode(kZerographDomain, "AdamW", inputs, 3);
  StatusOr<std::vector<OutputInfo>> infos = runner.Infer(*node, inputs);
  ASSERT_TRUE(infos.ok()) << infos.status().ToString();
  EXPECT_EQ((*infos)[0].in_place_input, 2);
  EXPECT_EQ((*infos)[1].in_place_input, 4);
  EXPECT_EQ((*infos)[2].in_place_input, 5);
}

// Step 0, mismatched shapes and a wrong input count are refused.
TEST(AdamWShapeTest, BadInputsAreRefused) {
  KernelRunner runner;
  std::vector<DeviceTensor> inputs = {runner.MakeTensor(DataType::kFloat32, {}, {0.1}),
                                      runner.MakeTensor(DataType::kInt64, {}, {0})};
  for (int i = 0; i < 4; ++i) inputs.push_back(runner.Random(DataType::kFloat32, {4}, i, 0, 1));
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "AdamW", inputs, 3);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("step"), std::string_view::npos);
  inputs[1] = runner.MakeTensor(DataType::kInt64, {}, {1});
  inputs[5] = runner.Random(DataType::kFloat32, {5}, 9);
  EXPECT_FALSE(runner.Run(kZerographDomain, "AdamW", inputs, 3).ok());
  inputs.pop_back();
  EXPECT_FALSE(runner.Run(kZerographDomain, "AdamW", inputs, 3).ok());
}

// SGD: X ← X − lr·G for each tensor.
TEST(SgdTest, MatchesFormula) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    std::vector<DeviceTensor> inputs = {
        runner.MakeTensor(DataType::kFloat32, {}, {0.25}), runner.Random(dtype, {2, 3}, 1),
        runner.Random(dtype, {4}, 2), runner.Random(dtype, {2, 3}, 3),
        runner.Random(dtype, {4}, 4)};
    StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "SGD", inputs, 2);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    for (size_t i = 0; i < 2; ++i) {
      std::vector<double> x = Values(inputs[1 + i]), g = Values(inputs[3 + i]), expected;
      for (size_t j = 0; j < x.size(); ++j) expected.push_back(x[j] - 0.25 * g[j]);
      ExpectNear(Values((*out)[i]), expected, 2 * UnitRoundoff(dtype), UnitRoundoff(dtype),
                 DataTypeName(dtype));
    }
  }
}

// The optional control input: every gradient scaled by control[0] inside the update (AdamW and SGD
// against their formulas on c0·G), and control[1] != 0 leaving every output equal to its input,
// for each dtype, in place (nothing written) and into fresh outputs (inputs copied).
class OptimizerControlTest : public ::testing::TestWithParam<DataType> {
 protected:
  // The inputs of `op` over two tensors with `control` appended; V non-negative.
  std::vector<DeviceTensor> Inputs(const std::string& op, const std::vector<double>& control) {
    const DataType dtype = GetParam();
    std::vector<DeviceTensor> inputs = {runner_.MakeTensor(DataType::kFloat32, {}, {0.05})};
    if (op == "AdamW") inputs.push_back(runner_.MakeTensor(DataType::kInt64, {}, {3}));
    const int groups = op == "AdamW" ? 4 : 2;
    uint32_t seed = 50;
    for (int group = 0; group < groups; ++group) {
      for (const Shape& shape : {Shape{2, 5}, Shape{13}}) {
        inputs.push_back(runner_.Random(dtype, shape, seed++, group == 3 ? 0 : -1, 1));
      }
    }
    inputs.push_back(runner_.MakeTensor(DataType::kFloat32, {3}, control));
    return inputs;
  }
  // Runs `op`, in place over copies of the tensors or into fresh outputs.
  std::vector<DeviceTensor> Run(const std::string& op, const std::vector<DeviceTensor>& inputs,
                                bool in_place) {
    const size_t num_outputs = op == "AdamW" ? 6 : 2;
    std::vector<DeviceTensor> fresh = inputs;
    for (size_t i = 0; i + 1 < fresh.size(); ++i) {
      fresh[i] = runner_.MakeTensor(inputs[i].dtype(), inputs[i].shape(), Values(inputs[i]));
    }
    Node* node = runner_.MakeNode(kZerographDomain, op, fresh, num_outputs);
    StatusOr<std::vector<DeviceTensor>> out = runner_.Run(*node, fresh, /*alias=*/in_place);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (in_place && out.ok()) {
      for (size_t o = 0; o < out->size(); ++o) {
        const size_t input = op == "SGD" ? 1 + o : o < 2 ? 2 + o : 4 + o;  // X', then M' V'
        EXPECT_EQ((*out)[o].data(), fresh[input].data()) << "output " << o << " not in place";
      }
    }
    return out.ok() ? *out : std::vector<DeviceTensor>();
  }
  KernelRunner runner_;
};

TEST_P(OptimizerControlTest, AdamWScalesGradients) {
  const DataType dtype = GetParam();
  const double c0 = 0.375;
  const std::vector<DeviceTensor> inputs = Inputs("AdamW", {c0, 0, 123});
  for (bool in_place : {false, true}) {
    const std::vector<DeviceTensor> out = Run("AdamW", inputs, in_place);
    ASSERT_EQ(out.size(), 6u);
    for (size_t i = 0; i < 2; ++i) {
      std::vector<double> g = Values(inputs[4 + i]);
      for (double& v : g) v *= c0;
      const AdamWState expected =
          ReferenceAdamW({Values(inputs[2 + i]), Values(inputs[6 + i]), Values(inputs[8 + i])}, g,
                         0.05, 3, static_cast<float>(0.9), static_cast<float>(0.999),
                         static_cast<float>(1e-8), static_cast<float>(0.01));
      const double rtol = 8 * UnitRoundoff(dtype);
      const std::string what = "tensor " + std::to_string(i) + (in_place ? " in place" : "");
      ExpectNear(Values(out[i]), expected.x, rtol, rtol, what + " X");
      ExpectNear(Values(out[2 + i]), expected.m, rtol, rtol, what + " M");
      ExpectNear(Values(out[4 + i]), expected.v, rtol, rtol, what + " V");
    }
  }
}

TEST_P(OptimizerControlTest, SgdScalesGradients) {
  const DataType dtype = GetParam();
  const double c0 = 2.5;
  const std::vector<DeviceTensor> inputs = Inputs("SGD", {c0, 0, 0});
  for (bool in_place : {false, true}) {
    const std::vector<DeviceTensor> out = Run("SGD", inputs, in_place);
    ASSERT_EQ(out.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      std::vector<double> x = Values(inputs[1 + i]), g = Values(inputs[3 + i]), expected;
      for (size_t j = 0; j < x.size(); ++j) expected.push_back(x[j] - 0.05 * (c0 * g[j]));
      ExpectNear(Values(out[i]), expected, 4 * UnitRoundoff(dtype), UnitRoundoff(dtype),
                 in_place ? "in place" : "copied");
    }
  }
}

// A skipped step keeps every parameter and state, bit for bit, whatever control[0] says.
TEST_P(OptimizerControlTest, SkipKeepsEveryInput) {
  for (const std::string op : {"AdamW", "SGD"}) {
    const std::vector<DeviceTensor> inputs = Inputs(op, {0.5, 1, 7});
    const size_t first = op == "AdamW" ? 2 : 1;
    for (bool in_place : {false, true}) {
      const std::vector<DeviceTensor> out = Run(op, inputs, in_place);
      ASSERT_EQ(out.size(), op == "AdamW" ? 6u : 2u);
      for (size_t o = 0; o < out.size(); ++o) {
        const size_t input = op == "SGD" ? first + o : o < 2 ? first + o : first + 2 + o;
        EXPECT_EQ(Values(out[o]), Values(inputs[input]))
            << op << " output " << o << (in_place ? " in place" : " copied");
      }
    }
  }
}

// The fp16 and bf16 updates give the same bits eight at a time (AVX2 and F16C, where the CPU has
// them: one tensor of 64 elements) as one at a time (64 one-element tensors, which only the scalar
// loop sees), with NaN payloads, infinities, subnormals and zeros among the values.
TEST(OptimizerBitsTest, VectorAndScalarLoopsAgree) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    for (const std::string op : {"AdamW", "SGD"}) {
      const int groups = op == "AdamW" ? 4 : 2;
      std::vector<std::vector<double>> values;
      for (int group = 0; group < groups; ++group) {
        DeviceTensor r = runner.Random(dtype, {64}, 70 + group, group == 3 ? 0 : -2, 2);
        values.push_back(Values(r));
      }
      const double nan = std::nan("");
      for (int group = 0; group < groups; ++group) {
        values[group][3 + group] = nan;
        values[group][11 + group] = group == 3 ? INFINITY : -INFINITY;
        values[group][20 + group] = 1e-7;  // subnormal in fp16
        values[group][30 + group] = 0;
      }
      auto scalars = [&] {
        std::vector<DeviceTensor> s = {runner.MakeTensor(DataType::kFloat32, {}, {0.01})};
        if (op == "AdamW") s.push_back(runner.MakeTensor(DataType::kInt64, {}, {4}));
        return s;
      };
      std::vector<DeviceTensor> whole = scalars(), split = scalars();
      for (int group = 0; group < groups; ++group) {
        whole.push_back(runner.MakeTensor(dtype, {64}, values[group]));
        for (size_t i = 0; i < 64; ++i)
          split.push_back(runner.MakeTensor(dtype, {1}, {values[group][i]}));
      }
      // A NaN with a payload, written as bits: the conversion from double makes none.
      const size_t x_at = op == "AdamW" ? 2 : 1;
      whole[x_at].data_as<uint16_t>()[40] = dtype == DataType::kFloat16 ? 0x7d23 : 0xff91;
      split[x_at + 40].data_as<uint16_t>()[0] = whole[x_at].data_as<uint16_t>()[40];
      const size_t outputs = op == "AdamW" ? 3 : 1;
      StatusOr<std::vector<DeviceTensor>> a = runner.Run(kZerographDomain, op, whole, outputs);
      StatusOr<std::vector<DeviceTensor>> b = runner.Run(kZerographDomain, op, split, 64 * outputs);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      for (size_t o = 0; o < outputs; ++o) {
        for (size_t i = 0; i < 64; ++i) {
          EXPECT_EQ((*a)[o].data_as<const uint16_t>()[i],
                    (*b)[o * 64 + i].data_as<const uint16_t>()[0])
              << op << " " << DataTypeName(dtype) << " output " << o << " element " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OptimizerControlTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat16,
                                           DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

}  // namespace
}  // namespace zerograph::runtime
