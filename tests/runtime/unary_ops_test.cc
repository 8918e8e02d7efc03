#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::UnitRoundoff;
using testing::Values;

class UnaryOpsTest : public ::testing::TestWithParam<DataType> {};

// Relu, Neg, Sqrt and Sin element-wise against a double reference.
TEST_P(UnaryOpsTest, MatchReference) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  DeviceTensor x = runner.Random(dtype, {5, 7}, 11, -2, 2);
  DeviceTensor positive = runner.Random(dtype, {33}, 12, 0, 4);
  std::vector<double> relu, neg, sqrt, sin;
  for (double v : Values(x)) {
    relu.push_back(v > 0 ? v : 0);
    neg.push_back(-v);
    sin.push_back(std::sin(v));
  }
  for (double v : Values(positive)) sqrt.push_back(std::sqrt(v));
  auto run = [&](const char* op, const DeviceTensor& in) {
    StatusOr<std::vector<DeviceTensor>> out = runner.Run("", op, {in}, 1);
    EXPECT_TRUE(out.ok()) << op << ": " << out.status().ToString();
    return out.ok() ? Values((*out)[0]) : std::vector<double>();
  };
  ExpectNear(run("Relu", x), relu, 0, 0, "Relu");
  ExpectNear(run("Neg", x), neg, 0, 0, "Neg");
  ExpectNear(run("Sqrt", positive), sqrt, UnitRoundoff(dtype), 0, "Sqrt");
  // Computed in fp32 for float16, rounded once; libm's sin is within an ulp. ONNX's Sin takes
  // no bfloat16, and no kernel is registered for it.
  if (dtype != DataType::kBFloat16) {
    ExpectNear(run("Sin", x), sin, 2 * UnitRoundoff(dtype), UnitRoundoff(dtype), "Sin");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, UnaryOpsTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                           DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// Element-wise outputs may take their input's memory; computing in place gives the same values.
TEST(UnaryOpsInPlaceTest, ReluMayRunInPlace) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {4}, {-1, 2, -3, 4});
  Node* node = runner.MakeNode("", "Relu", {x}, 1);
  StatusOr<std::vector<OutputInfo>> infos = runner.Infer(*node, {x});
  ASSERT_TRUE(infos.ok());
  EXPECT_EQ((*infos)[0].in_place_input, 0);
}

}  // namespace
}  // namespace zerograph::runtime
