// The element-wise family a transformer needs, on the CPU: the unary math and logic ops, the
// comparisons, integer division, Pow, Mod, LeakyRelu, Gelu, Clip, the variadic Max/Min/Sum/Mean and
// Where, each against a reference computed here in double.

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::BroadcastIndex;
using testing::ExpectNear;
using testing::KernelRunner;
using testing::UnitRoundoff;
using testing::Unravel;
using testing::Values;

// The values of output 0 of one node, failing the test (and giving none) when it does not run.
std::vector<double> RunValues(KernelRunner& runner, std::string_view op,
                              const std::vector<DeviceTensor>& inputs,
                              const std::vector<Attr>& attrs = {}) {
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", op, inputs, 1, attrs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status().ToString();
  return out.ok() ? Values((*out)[0]) : std::vector<double>();
}

// f over the inputs broadcast to `out`, in double.
std::vector<double> Broadcast(const std::vector<const DeviceTensor*>& inputs, const Shape& out,
                              const std::function<double(const std::vector<double>&)>& f) {
  std::vector<std::vector<double>> values;
  for (const DeviceTensor* t : inputs) values.push_back(Values(*t));
  std::vector<double> result;
  for (int64_t i = 0; i < NumElements(out); ++i) {
    const std::vector<int64_t> index = Unravel(i, out);
    std::vector<double> args;
    for (size_t k = 0; k < inputs.size(); ++k) {
      args.push_back(values[k][static_cast<size_t>(BroadcastIndex(index, inputs[k]->shape()))]);
    }
    result.push_back(f(args));
  }
  return result;
}

std::vector<double> Map(const DeviceTensor& x, const std::function<double(double)>& f) {
  std::vector<double> result;
  for (double v : Values(x)) result.push_back(f(v));
  return result;
}

double GeluExact(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

class FloatFamilyTest : public ::testing::TestWithParam<DataType> {};

// The unary float ops, computed in fp32 for the 16-bit floats and rounded once: within two units
// of roundoff of the dtype (libm is within an ulp of fp32).
TEST_P(FloatFamilyTest, UnaryOpsMatchReference) {
  const DataType dtype = GetParam();
  const double u = UnitRoundoff(dtype);
  KernelRunner runner;
  const DeviceTensor x = runner.Random(dtype, {5, 7}, 21, -3, 3);
  const DeviceTensor positive = runner.Random(dtype, {19}, 22, 0.1, 4);
  ExpectNear(RunValues(runner, "Abs", {x}), Map(x, [](double v) { return std::fabs(v); }), 0, 0,
             "Abs");
  ExpectNear(RunValues(runner, "Exp", {x}), Map(x, [](double v) { return std::exp(v); }), 4 * u, 0,
             "Exp");
  ExpectNear(RunValues(runner, "Log", {positive}),
             Map(positive, [](double v) { return std::log(v); }), 4 * u, 4 * u, "Log");
  ExpectNear(RunValues(runner, "Reciprocal", {positive}),
             Map(positive, [](double v) { return 1 / v; }), 2 * u, 0, "Reciprocal");
  ExpectNear(RunValues(runner, "Erf", {x}), Map(x, [](double v) { return std::erf(v); }), 4 * u,
             4 * u, "Erf");
  ExpectNear(RunValues(runner, "Tanh", {x}), Map(x, [](double v) { return std::tanh(v); }), 4 * u,
             4 * u, "Tanh");
  ExpectNear(RunValues(runner, "Sigmoid", {x}),
             Map(x, [](double v) { return 1 / (1 + std::exp(-v)); }), 4 * u, 4 * u, "Sigmoid");
  ExpectNear(RunValues(runner, "Floor", {x}), Map(x, [](double v) { return std::floor(v); }), 0, 0,
             "Floor");
  ExpectNear(RunValues(runner, "Ceil", {x}), Map(x, [](double v) { return std::ceil(v); }), 0, 0,
             "Ceil");
  ExpectNear(RunValues(runner, "Sign", {x}),
             Map(x, [](double v) { return static_cast<double>((v > 0) - (v < 0)); }), 0, 0, "Sign");
  ExpectNear(RunValues(runner, "LeakyRelu", {x}),
             Map(x, [](double v) { return v < 0 ? double{0.01f} * v : v; }), 2 * u, 0,
             "LeakyRelu default alpha");
  ExpectNear(RunValues(runner, "LeakyRelu", {x}, {Attr("alpha", 0.5)}),
             Map(x, [](double v) { return v < 0 ? 0.5 * v : v; }), 2 * u, 0, "LeakyRelu alpha");
  ExpectNear(RunValues(runner, "Gelu", {x}), Map(x, GeluExact), 4 * u, 4 * u, "Gelu");
  ExpectNear(RunValues(runner, "Gelu", {x}, {Attr("approximate", "tanh")}), Map(x, GeluTanh), 4 * u,
             4 * u, "Gelu tanh");
}

// Sum, Mean, Max and Min of one, two and three inputs broadcast together.
TEST_P(FloatFamilyTest, VariadicOpsBroadcastTheirInputs) {
  const DataType dtype = GetParam();
  const double u = UnitRoundoff(dtype);
  KernelRunner runner;
  const DeviceTensor a = runner.Random(dtype, {3, 1}, 31, -2, 2);
  const DeviceTensor b = runner.Random(dtype, {4}, 32, -2, 2);
  const DeviceTensor c = runner.Random(dtype, {2, 1, 1}, 33, -2, 2);
  const auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  const auto mean = [&](const std::vector<double>& v) { return sum(v) / v.size(); };
  const auto max = [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
  };
  const auto min = [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  };
  for (const std::vector<const DeviceTensor*>& inputs :
       std::vector<std::vector<const DeviceTensor*>>{{&b}, {&a, &b}, {&a, &b, &c}}) {
    std::vector<DeviceTensor> tensors;
    Shape out;
    for (const DeviceTensor* t : inputs) {
      tensors.push_back(*t);
      out = *BroadcastShapes(out, t->shape());
    }
    const std::string what = StrCat(inputs.size(), " inputs");
    // Each fold step rounds once; Mean's scaling once more.
    ExpectNear(RunValues(runner, "Sum", tensors), Broadcast(inputs, out, sum), 0, 4 * u * 6,
               "Sum " + what);
    ExpectNear(RunValues(runner, "Mean", tensors), Broadcast(inputs, out, mean), 0, 4 * u * 6,
               "Mean " + what);
    ExpectNear(RunValues(runner, "Max", tensors), Broadcast(inputs, out, max), 0, 0, "Max " + what);
    ExpectNear(RunValues(runner, "Min", tensors), Broadcast(inputs, out, min), 0, 0, "Min " + what);
  }
}

// Where picks from X and Y, all three broadcast.
TEST_P(FloatFamilyTest, WhereBroadcastsThreeWays) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  const DeviceTensor condition = runner.MakeTensor(DataType::kBool, {2, 1, 3}, {1, 0, 1, 0, 0, 1});
  const DeviceTensor x = runner.Random(dtype, {4, 1}, 41);
  const DeviceTensor y = runner.Random(dtype, {3}, 42);
  ExpectNear(RunValues(runner, "Where", {condition, x, y}),
             Broadcast({&condition, &x, &y}, {2, 4, 3},
                       [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; }),
             0, 0, "Where");
}

// Clip-11: either bound, both or neither, as inputs; Clip-6: as attributes.
TEST_P(FloatFamilyTest, ClipTakesBoundsAsInputsOrAttributes) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  const DeviceTensor x = runner.MakeTensor(dtype, {6}, {-3, -1, 0, 0.5, 2, 5});
  const DeviceTensor lo = runner.MakeTensor(dtype, {}, {-1});
  const DeviceTensor hi = runner.MakeTensor(dtype, {}, {2});
  const DeviceTensor none;
  EXPECT_EQ(RunValues(runner, "Clip", {x, lo, hi}), (std::vector<double>{-1, -1, 0, 0.5, 2, 2}));
  EXPECT_EQ(RunValues(runner, "Clip", {x, lo}), (std::vector<double>{-1, -1, 0, 0.5, 2, 5}));
  EXPECT_EQ(RunValues(runner, "Clip", {x, none, hi}), (std::vector<double>{-3, -1, 0, 0.5, 2, 2}));
  EXPECT_EQ(RunValues(runner, "Clip", {x}), Values(x));
  if (dtype == DataType::kBFloat16) return;  // Clip-6 takes no bfloat16
  runner.set_opset_version(6);
  EXPECT_EQ(RunValues(runner, "Clip", {x}, {Attr("min", -1.0), Attr("max", 2.0)}),
            (std::vector<double>{-1, -1, 0, 0.5, 2, 2}));
  EXPECT_EQ(RunValues(runner, "Clip", {x}, {Attr("max", 0.0)}),
            (std::vector<double>{-3, -1, 0, 0, 0, 0}));
}

// Pow of a float base by a float exponent, broadcast.
TEST_P(FloatFamilyTest, PowBroadcasts) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  const DeviceTensor base = runner.Random(dtype, {2, 3}, 51, 0.5, 2);
  const DeviceTensor exponent = runner.Random(dtype, {3}, 52, -2, 2);
  ExpectNear(RunValues(runner, "Pow", {base, exponent}),
             Broadcast({&base, &exponent}, {2, 3},
                       [](const std::vector<double>& v) { return std::pow(v[0], v[1]); }),
             8 * UnitRoundoff(dtype), 0, "Pow");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FloatFamilyTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// The integer forms: exact, and division never traps.
TEST(IntegerFamilyTest, UnaryOpsAreExact) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kInt8, DataType::kInt32, DataType::kInt64}) {
    const DeviceTensor x = runner.MakeTensor(dtype, {5}, {-7, -1, 0, 3, 100});
    EXPECT_EQ(RunValues(runner, "Abs", {x}), (std::vector<double>{7, 1, 0, 3, 100}));
    EXPECT_EQ(RunValues(runner, "Neg", {x}), (std::vector<double>{7, 1, 0, -3, -100}));
    EXPECT_EQ(RunValues(runner, "Sign", {x}), (std::vector<double>{-1, -1, 0, 1, 1}));
    EXPECT_EQ(RunValues(runner, "Relu", {x}), (std::vector<double>{0, 0, 0, 3, 100}));
  }
  const DeviceTensor u = runner.MakeTensor(DataType::kUint8, {3}, {0, 5, 255});
  EXPECT_EQ(RunValues(runner, "Abs", {u}), (std::vector<double>{0, 5, 255}));
  EXPECT_EQ(RunValues(runner, "Sign", {u}), (std::vector<double>{0, 1, 1}));
}

TEST(IntegerFamilyTest, DivisionTruncatesAndNeverTraps) {
  KernelRunner runner;
  const DeviceTensor a = runner.MakeTensor(DataType::kInt32, {5}, {7, -7, 7, 5, -2147483648.0});
  const DeviceTensor b = runner.MakeTensor(DataType::kInt32, {5}, {2, 2, -2, 0, -1});
  EXPECT_EQ(RunValues(runner, "Div", {a, b}), (std::vector<double>{3, -3, -3, 0, -2147483648.0}));
  // uint8 wraps, as numpy's does.
  const DeviceTensor c = runner.MakeTensor(DataType::kUint8, {2}, {200, 3});
  const DeviceTensor d = runner.MakeTensor(DataType::kUint8, {2}, {100, 4});
  EXPECT_EQ(RunValues(runner, "Add", {c, d}), (std::vector<double>{44, 7}));
  EXPECT_EQ(RunValues(runner, "Sub", {c, d}), (std::vector<double>{100, 255}));
}

// Mod: fmod=0 takes the divisor's sign (Python), fmod=1 the dividend's (C); floats need fmod=1.
TEST(IntegerFamilyTest, ModFollowsTheSignTheAttributeAsks) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kInt8, DataType::kInt32, DataType::kInt64}) {
    const DeviceTensor a = runner.MakeTensor(dtype, {6}, {-4, 7, 5, 4, -7, 8});
    const DeviceTensor b = runner.MakeTensor(dtype, {6}, {2, -3, 8, -2, 3, 0});
    EXPECT_EQ(RunValues(runner, "Mod", {a, b}), (std::vector<double>{0, -2, 5, 0, 2, 0}))
        << DataTypeName(dtype);
    EXPECT_EQ(RunValues(runner, "Mod", {a, b}, {Attr("fmod", 1)}),
              (std::vector<double>{0, 1, 5, 0, -1, 0}))
        << DataTypeName(dtype);
  }
  const DeviceTensor f = runner.MakeTensor(DataType::kFloat32, {3}, {-4.5, 7, 5.25});
  const DeviceTensor g = runner.MakeTensor(DataType::kFloat32, {1}, {2});
  EXPECT_EQ(RunValues(runner, "Mod", {f, g}, {Attr("fmod", 1)}),
            (std::vector<double>{-0.5, 1, 1.25}));
  StatusOr<std::vector<DeviceTensor>> refused = runner.Run("", "Mod", {f, g}, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("fmod=1"), std::string_view::npos)
      << refused.status().ToString();
}

// Pow with exponents of another dtype than the base, as ONNX's Pow-12 allows.
TEST(IntegerFamilyTest, PowMixesDtypes) {
  KernelRunner runner;
  const DeviceTensor fx = runner.MakeTensor(DataType::kFloat32, {3}, {1, 2, 3});
  const DeviceTensor ix = runner.MakeTensor(DataType::kInt32, {3}, {1, 2, 3});
  const DeviceTensor ly = runner.MakeTensor(DataType::kInt64, {3}, {4, 5, 6});
  const DeviceTensor fy = runner.MakeTensor(DataType::kFloat32, {3}, {4, 5, 6});
  const DeviceTensor uy = runner.MakeTensor(DataType::kUint8, {3}, {4, 5, 6});
  const std::vector<double> expected = {1, 32, 729};
  EXPECT_EQ(RunValues(runner, "Pow", {fx, ly}), expected);
  EXPECT_EQ(RunValues(runner, "Pow", {fx, uy}), expected);
  EXPECT_EQ(RunValues(runner, "Pow", {ix, fy}), expected);
  EXPECT_EQ(RunValues(runner, "Pow", {ix, ly}), expected);
}

TEST(IntegerFamilyTest, VariadicAndClipTakeIntegers) {
  KernelRunner runner;
  const DeviceTensor a = runner.MakeTensor(DataType::kInt8, {3}, {-128, 5, 127});
  const DeviceTensor b = runner.MakeTensor(DataType::kInt8, {1}, {0});
  EXPECT_EQ(RunValues(runner, "Max", {a, b}), (std::vector<double>{0, 5, 127}));
  EXPECT_EQ(RunValues(runner, "Min", {a, b}), (std::vector<double>{-128, 0, 0}));
  const DeviceTensor lo = runner.MakeTensor(DataType::kInt8, {}, {-5});
  EXPECT_EQ(RunValues(runner, "Clip", {a, lo}), (std::vector<double>{-5, 5, 127}));
}

// NaN wins in Max and Min, as numpy's maximum and minimum.
TEST(FloatFamilyNanTest, MaxAndMinPropagateNan) {
  KernelRunner runner;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const DeviceTensor a = runner.MakeTensor(DataType::kFloat32, {2}, {nan, 1});
  const DeviceTensor b = runner.MakeTensor(DataType::kFloat32, {2}, {1, nan});
  for (const char* op : {"Max", "Min"}) {
    for (double v : RunValues(runner, op, {a, b})) EXPECT_TRUE(std::isnan(v)) << op;
  }
}

// Comparisons and logic ops broadcast and yield bool.
TEST(LogicFamilyTest, ComparisonsAndLogicYieldBool) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat32, DataType::kInt32, DataType::kFloat16}) {
    const DeviceTensor a = runner.MakeTensor(dtype, {2, 3}, {1, 2, 3, 4, 5, 6});
    const DeviceTensor b = runner.MakeTensor(dtype, {3}, {2, 2, 7});
    EXPECT_EQ(RunValues(runner, "Equal", {a, b}), (std::vector<double>{0, 1, 0, 0, 0, 0}));
    EXPECT_EQ(RunValues(runner, "Less", {a, b}), (std::vector<double>{1, 0, 1, 0, 0, 1}));
    EXPECT_EQ(RunValues(runner, "LessOrEqual", {a, b}), (std::vector<double>{1, 1, 1, 0, 0, 1}));
    EXPECT_EQ(RunValues(runner, "GreaterOrEqual", {a, b}), (std::vector<double>{0, 1, 0, 1, 1, 0}));
  }
  const DeviceTensor p = runner.MakeTensor(DataType::kBool, {2, 2}, {0, 0, 1, 1});
  const DeviceTensor q = runner.MakeTensor(DataType::kBool, {2}, {0, 1});
  EXPECT_EQ(RunValues(runner, "And", {p, q}), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(RunValues(runner, "Or", {p, q}), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(RunValues(runner, "Equal", {p, q}), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(RunValues(runner, "Not", {p}), (std::vector<double>{1, 1, 0, 0}));
}

// Where moves elements of every dtype.
TEST(LogicFamilyTest, WhereTakesEveryDtype) {
  KernelRunner runner;
  const DeviceTensor condition = runner.MakeTensor(DataType::kBool, {3}, {1, 0, 1});
  for (DataType dtype : {DataType::kInt64, DataType::kInt8, DataType::kBool, DataType::kUint8}) {
    const DeviceTensor x = runner.MakeTensor(dtype, {3}, {1, 1, 1});
    const DeviceTensor y = runner.MakeTensor(dtype, {1}, {0});
    EXPECT_EQ(RunValues(runner, "Where", {condition, x, y}), (std::vector<double>{1, 0, 1}))
        << DataTypeName(dtype);
  }
}

// Shapes that do not broadcast are refused with an error naming the node and the shapes.
TEST(ElementwiseFamilyErrorTest, ShapesThatDoNotBroadcastNameTheNode) {
  KernelRunner runner;
  const DeviceTensor condition = runner.MakeTensor(DataType::kBool, {3}, {1, 0, 1});
  const DeviceTensor x = runner.Random(DataType::kFloat32, {2, 4}, 61);
  const DeviceTensor y = runner.Random(DataType::kFloat32, {3}, 62);
  for (const auto& [op, inputs] : std::vector<std::pair<std::string, std::vector<DeviceTensor>>>{
           {"Where", {condition, x, y}}, {"Max", {y, x}}, {"Sum", {x, x, y}}}) {
    Node* node = runner.MakeNode("", op, inputs, 1);
    StatusOr<std::vector<DeviceTensor>> out = runner.Run(*node, inputs);
    ASSERT_FALSE(out.ok()) << op;
    const std::string message(out.status().message());
    EXPECT_NE(message.find(node->name()), std::string::npos) << message;
    EXPECT_NE(message.find("[2,4]"), std::string::npos) << message;
  }
  StatusOr<std::vector<DeviceTensor>> gelu =
      runner.Run("", "Gelu", {x}, 1, {Attr("approximate", "fast")});
  ASSERT_FALSE(gelu.ok());
  EXPECT_NE(gelu.status().message().find("'fast'"), std::string_view::npos)
      << gelu.status().ToString();
}

// The variadic ops may run in place over input 0 (or 1) when it has the output's shape, with the
// same values.
TEST(ElementwiseFamilyInPlaceTest, VariadicOpsMayRunInPlace) {
  KernelRunner runner;
  const DeviceTensor x = runner.Random(DataType::kFloat32, {2, 3}, 71);
  const DeviceTensor y = runner.Random(DataType::kFloat32, {3}, 72);
  Node* node = runner.MakeNode("", "Max", {y, x}, 1);
  StatusOr<std::vector<OutputInfo>> infos = runner.Infer(*node, {y, x});
  ASSERT_TRUE(infos.ok()) << infos.status().ToString();
  EXPECT_EQ((*infos)[0].in_place_input, 1);
  const std::vector<double> expected = RunValues(runner, "Max", {y, x});
  StatusOr<std::vector<DeviceTensor>> aliased = runner.Run(*node, {y, x}, /*alias=*/true);
  ASSERT_TRUE(aliased.ok()) << aliased.status().ToString();
  EXPECT_EQ(Values((*aliased)[0]), expected);
}

}  // namespace
}  // namespace zerograph::runtime
