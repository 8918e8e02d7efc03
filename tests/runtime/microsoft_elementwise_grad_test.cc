// ONNX Runtime's element-wise gradient ops (com.microsoft) on the CPU, each against central
// differences of its forward op run by our own kernels in double: L(x) = Σ dY·forward(x), so
// dL/dx is what the gradient op must give for that dY.

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::NumericGradient;
using testing::UnitRoundoff;
using testing::Values;

constexpr DataType kF64 = DataType::kFloat64;
// Central differences in double with h = 1e-6: truncation ~1e-12, cancellation ~1e-10.
constexpr double kFiniteDifferenceTolerance = 1e-7;

std::vector<DeviceTensor> RunOk(KernelRunner& runner, std::string_view domain, std::string_view op,
                                const std::vector<DeviceTensor>& inputs, size_t outputs = 1,
                                const std::vector<Attr>& attrs = {}) {
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(domain, op, inputs, outputs, attrs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status().ToString();
  return out.ok() ? *std::move(out) : std::vector<DeviceTensor>();
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

struct ActivationGrad {
  const char* grad;     // com.microsoft op
  const char* forward;  // ONNX op
  std::vector<Attr> attrs;
  bool takes_output;  // the gradient reads Y = forward(X), not X
};

// dX of ReluGrad, SigmoidGrad, TanhGrad, GeluGrad and FastGeluGrad is dL/dX.
TEST(MicrosoftGradTest, ActivationGradsMatchFiniteDifferences) {
  KernelRunner runner;
  const Shape shape = {3, 5};
  // Away from Relu's kink at 0.
  std::vector<double> x = Values(runner.Random(kF64, shape, 81, 0.05, 2));
  for (size_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
  const DeviceTensor dy = runner.Random(kF64, shape, 82);
  const std::vector<ActivationGrad> cases = {
      {"ReluGrad", "Relu", {}, false},
      {"SigmoidGrad", "Sigmoid", {}, true},
      {"TanhGrad", "Tanh", {}, true},
      {"GeluGrad", "Gelu", {}, false},
      {"FastGeluGrad", "Gelu", {Attr("approximate", "tanh")}, false}};
  for (const ActivationGrad& c : cases) {
    const auto loss = [&](const std::vector<double>& at) {
      const std::vector<DeviceTensor> y =
          RunOk(runner, "", c.forward, {runner.MakeTensor(kF64, shape, at)}, 1, c.attrs);
      return y.empty() ? 0.0 : Dot(Values(dy), Values(y[0]));
    };
    DeviceTensor second = runner.MakeTensor(kF64, shape, x);
    if (c.takes_output) second = RunOk(runner, "", c.forward, {second})[0];
    const std::vector<DeviceTensor> dx = RunOk(runner, kMicrosoftDomain, c.grad, {dy, second});
    ASSERT_EQ(dx.size(), 1u) << c.grad;
    ExpectNear(Values(dx[0]), NumericGradient(loss, x), 0, kFiniteDifferenceTolerance, c.grad);
  }
}

// The 16-bit and fp32 forms compute in fp32 and round once.
TEST(MicrosoftGradTest, NarrowDtypesRoundOnce) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    const DeviceTensor dy = runner.Random(dtype, {17}, 83);
    const DeviceTensor x = runner.Random(dtype, {17}, 84, -3, 3);
    std::vector<double> expected;
    const std::vector<double> g = Values(dy), v = Values(x);
    for (size_t i = 0; i < g.size(); ++i) {
      const double cdf = 0.5 * (1 + std::erf(v[i] / std::sqrt(2.0)));
      const double pdf = std::exp(-0.5 * v[i] * v[i]) / std::sqrt(2 * M_PI);
      expected.push_back(g[i] * (cdf + v[i] * pdf));
    }
    const std::vector<DeviceTensor> dx = RunOk(runner, kMicrosoftDomain, "GeluGrad", {dy, x});
    ASSERT_EQ(dx.size(), 1u);
    ExpectNear(Values(dx[0]), expected, 4 * UnitRoundoff(dtype), 4 * UnitRoundoff(dtype),
               DataTypeName(dtype));
  }
}

// BiasGeluGrad_dX(dY, X, B) is dL/dX of L = Σ dY·Gelu(X + B), B along the last dimension.
TEST(MicrosoftGradTest, BiasGeluGradMatchesFiniteDifferences) {
  KernelRunner runner;
  const Shape shape = {3, 4};
  const std::vector<double> x = Values(runner.Random(kF64, shape, 85, -2, 2));
  const DeviceTensor b = runner.Random(kF64, {4}, 86);
  const DeviceTensor dy = runner.Random(kF64, shape, 87);
  const auto loss = [&](const std::vector<double>& at) {
    const std::vector<DeviceTensor> sum =
        RunOk(runner, "", "Add", {runner.MakeTensor(kF64, shape, at), b});
    const std::vector<DeviceTensor> y = RunOk(runner, "", "Gelu", {sum.at(0)});
    return y.empty() ? 0.0 : Dot(Values(dy), Values(y[0]));
  };
  const std::vector<DeviceTensor> dx = RunOk(runner, kMicrosoftDomain, "BiasGeluGrad_dX",
                                             {dy, runner.MakeTensor(kF64, shape, x), b});
  ASSERT_EQ(dx.size(), 1u);
  ExpectNear(Values(dx[0]), NumericGradient(loss, x), 0, kFiniteDifferenceTolerance);
  // B must be as long as X's last dimension.
  StatusOr<std::vector<DeviceTensor>> refused =
      runner.Run(kMicrosoftDomain, "BiasGeluGrad_dX", {dy, dy, runner.Random(kF64, {3}, 88)}, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("last dimension"), std::string_view::npos)
      << refused.status().ToString();
}

// DivGrad's dA and dB are dL/dA and dL/dB of L = Σ dY·(A / B), summed back over the axes each
// was broadcast along.
TEST(MicrosoftGradTest, DivGradReducesOverBroadcastAxes) {
  KernelRunner runner;
  struct Case {
    Shape a, b, out;
  };
  for (const Case& c : std::vector<Case>{{{2, 3}, {2, 3}, {2, 3}},
                                         {{2, 3, 4}, {3, 1}, {2, 3, 4}},
                                         {{4}, {2, 3, 4}, {2, 3, 4}},
                                         {{2, 1}, {1, 3}, {2, 3}}}) {
    const std::string what = ShapeToString(c.a) + " / " + ShapeToString(c.b);
    const std::vector<double> a = Values(runner.Random(kF64, c.a, 91, -2, 2));
    const std::vector<double> b = Values(runner.Random(kF64, c.b, 92, 0.5, 2));
    const DeviceTensor dy = runner.Random(kF64, c.out, 93);
    const auto loss = [&](const std::vector<double>& va, const std::vector<double>& vb) {
      const std::vector<DeviceTensor> q = RunOk(
          runner, "", "Div", {runner.MakeTensor(kF64, c.a, va), runner.MakeTensor(kF64, c.b, vb)});
      return q.empty() ? 0.0 : Dot(Values(dy), Values(q[0]));
    };
    const std::vector<DeviceTensor> grads =
        RunOk(runner, kMicrosoftDomain, "DivGrad",
              {dy, runner.MakeTensor(kF64, c.a, a), runner.MakeTensor(kF64, c.b, b)}, 2);
    ASSERT_EQ(grads.size(), 2u) << what;
    EXPECT_EQ(grads[0].shape(), c.a) << what;
    EXPECT_EQ(grads[1].shape(), c.b) << what;
    ExpectNear(Values(grads[0]),
               NumericGradient([&](const std::vector<double>& va) { return loss(va, b); }, a), 0,
               kFiniteDifferenceTolerance, "dA " + what);
    ExpectNear(Values(grads[1]),
               NumericGradient([&](const std::vector<double>& vb) { return loss(a, vb); }, b), 0,
               kFiniteDifferenceTolerance, "dB " + what);
    // dB omitted (a trailing optional output): dA alone, the same.
    const std::vector<DeviceTensor> only_a =
        RunOk(runner, kMicrosoftDomain, "DivGrad",
              {dy, runner.MakeTensor(kF64, c.a, a), runner.MakeTensor(kF64, c.b, b)}, 1);
    ASSERT_EQ(only_a.size(), 1u) << what;
    EXPECT_EQ(Values(only_a[0]), Values(grads[0])) << what;
  }
}

// An omitted dA (a null output, as the executor passes for an output named "") is skipped: dB
// alone, the same as with both.
TEST(MicrosoftGradTest, DivGradSkipsAnOmittedLeadingOutput) {
  KernelRunner runner;
  const DeviceTensor dy = runner.Random(kF64, {2, 3}, 94);
  const DeviceTensor a = runner.Random(kF64, {2, 3}, 95);
  const DeviceTensor b = runner.Random(kF64, {3}, 96, 0.5, 2);
  const std::vector<DeviceTensor> both = RunOk(runner, kMicrosoftDomain, "DivGrad", {dy, a, b}, 2);
  ASSERT_EQ(both.size(), 2u);
  Node* node = runner.MakeNode(kMicrosoftDomain, "DivGrad", {dy, a, b}, 2);
  const std::vector<DataType> dtypes(3, kF64);
  StatusOr<std::unique_ptr<OpKernel>> kernel =
      runner.registry().CreateKernel(*node, DeviceType::kCpu, dtypes);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  StatusOr<DeviceTensor> db = DeviceTensor::Allocate(runner.device(), kF64, {3});
  StatusOr<std::unique_ptr<Stream>> stream = runner.device().CreateStream("test");
  ASSERT_TRUE(db.ok() && stream.ok());
  const std::vector<const DeviceTensor*> inputs = {&dy, &a, &b};
  const std::vector<DeviceTensor*> outputs = {nullptr, &*db};
  const Status status = (*kernel)->Compute(KernelContext{inputs, outputs, stream->get(), nullptr});
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Values(*db), Values(both[1]));
}

// Scale multiplies by its scalar input, or divides with scale_down; a zero scale is refused.
TEST(MicrosoftGradTest, ScaleMultipliesOrDivides) {
  KernelRunner runner;
  const DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {3}, {1, -2, 4});
  const DeviceTensor four = runner.MakeTensor(DataType::kInt64, {1}, {4});
  const DeviceTensor half = runner.MakeTensor(DataType::kFloat64, {}, {0.5});
  EXPECT_EQ(Values(RunOk(runner, kMicrosoftDomain, "Scale", {x, four})[0]),
            (std::vector<double>{4, -8, 16}));
  EXPECT_EQ(
      Values(RunOk(runner, kMicrosoftDomain, "Scale", {x, four}, 1, {Attr("scale_down", 1)})[0]),
      (std::vector<double>{0.25, -0.5, 1}));
  EXPECT_EQ(Values(RunOk(runner, kMicrosoftDomain, "Scale", {x, half})[0]),
            (std::vector<double>{0.5, -1, 2}));
  const DeviceTensor zero = runner.MakeTensor(DataType::kInt32, {1}, {0});
  StatusOr<std::vector<DeviceTensor>> refused = runner.Run(kMicrosoftDomain, "Scale", {x, zero}, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("scale is 0"), std::string_view::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace zerograph::runtime
