#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/executor.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::NumericGradient;
using testing::Values;

constexpr const char* kMicrosoft = "com.microsoft";

// Dropout-13 in training mode with `ratio` and seed 42; returns (output, mask).
std::vector<DeviceTensor> TrainDropout(KernelRunner& runner, const DeviceTensor& x, double ratio,
                                       int64_t step, int rank) {
  runner.set_step(step);
  runner.set_rank(rank, 2);
  DeviceTensor r = runner.MakeTensor(DataType::kFloat32, {}, {ratio});
  DeviceTensor training = runner.MakeTensor(DataType::kBool, {}, {1});
  auto out = runner.Run("", "Dropout", {x, r, training}, 2, {Attr("seed", 42)});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::vector<DeviceTensor>{};
}

// The mask is a function of (seed, step, rank): the same triple draws the same mask, another step
// or rank another.
TEST(DropoutTest, MaskIsDeterministicPerSeedStepAndRank) {
  KernelRunner runner;
  DeviceTensor x = runner.Random(DataType::kFloat32, {64, 33}, 1);
  const std::vector<double> base = Values(TrainDropout(runner, x, 0.5, 3, 1)[1]);
  EXPECT_EQ(Values(TrainDropout(runner, x, 0.5, 3, 1)[1]), base);
  EXPECT_NE(Values(TrainDropout(runner, x, 0.5, 4, 1)[1]), base);
  EXPECT_NE(Values(TrainDropout(runner, x, 0.5, 3, 0)[1]), base);
}

// About 1 - ratio of the elements are kept, each scaled by 1 / (1 - ratio); the others are 0.
TEST(DropoutTest, KeepsOneMinusRatioScaled) {
  KernelRunner runner;
  for (DataType dtype :
       {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16}) {
    for (double ratio : {0.1, 0.3, 0.75}) {
      DeviceTensor x = runner.Random(dtype, {100000}, 2, 0.5, 1.5);
      const std::vector<DeviceTensor> out = TrainDropout(runner, x, ratio, 0, 0);
      ASSERT_EQ(out.size(), 2u);
      const std::vector<double> vx = Values(x), vy = Values(out[0]), mask = Values(out[1]);
      std::vector<double> expected(vx.size());
      double kept = 0;
      for (size_t i = 0; i < vx.size(); ++i) {
        kept += mask[i];
        // The ratio as its fp32 tensor holds it.
        expected[i] = mask[i] != 0 ? vx[i] / (1.0 - double(static_cast<float>(ratio))) : 0;
      }
      // Binomial: the standard deviation of the kept fraction is below 0.002 here.
      EXPECT_NEAR(kept / static_cast<double>(vx.size()), 1 - ratio, 0.01) << ratio;
      const double tol = 2 * testing::UnitRoundoff(dtype);
      ExpectNear(vy, expected, tol, 0, std::string(DataTypeName(dtype)));
    }
  }
}

// Without training_mode (or with it false), and in the opsets before 12, Dropout is the identity
// with a mask all true.
TEST(DropoutTest, InferenceIsIdentity) {
  KernelRunner runner;
  DeviceTensor x = runner.Random(DataType::kFloat32, {7, 5}, 3);
  DeviceTensor r = runner.MakeTensor(DataType::kFloat32, {}, {0.5});
  DeviceTensor off = runner.MakeTensor(DataType::kBool, {}, {0});
  for (const std::vector<DeviceTensor>& inputs :
       {std::vector<DeviceTensor>{x}, std::vector<DeviceTensor>{x, r},
        std::vector<DeviceTensor>{x, r, off}}) {
    auto out = runner.Run("", "Dropout", inputs, 2);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values((*out)[0]), Values(x));
    EXPECT_EQ(Values((*out)[1]), std::vector<double>(35, 1.0));
  }
}

// Before opset 12 Dropout has no training mode: the identity, with Dropout-7's mask in the data's
// dtype and Dropout-10's in bool.
TEST(DropoutTest, OldOpsetsAreIdentityWithTheirMaskType) {
  KernelRunner runner;
  DeviceTensor x = runner.Random(DataType::kFloat32, {6}, 3);
  for (int64_t opset : {7, 10}) {
    runner.set_opset_version(opset);
    auto out = runner.Run("", "Dropout", {x}, 2, {Attr("ratio", 0.3f)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values((*out)[0]), Values(x));
    EXPECT_EQ((*out)[1].dtype(), opset == 7 ? DataType::kFloat32 : DataType::kBool);
    EXPECT_EQ(Values((*out)[1]), std::vector<double>(6, 1.0));
  }
}

// A ratio outside [0, 1) is refused.
TEST(DropoutTest, RatioOutOfRangeIsRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.Random(DataType::kFloat32, {4}, 3);
  DeviceTensor r = runner.MakeTensor(DataType::kFloat32, {}, {1.0});
  DeviceTensor on = runner.MakeTensor(DataType::kBool, {}, {1});
  EXPECT_FALSE(runner.Run("", "Dropout", {x, r, on}, 1).ok());
}

// DropoutGrad with Dropout's mask is the derivative of sum(dy · Dropout(x)) at the same step,
// checked against central differences in double.
TEST(DropoutTest, GradMatchesFiniteDifferencesOfDropout) {
  KernelRunner runner;
  const Shape shape = {6, 9};
  const double ratio = 0.4;
  DeviceTensor x = runner.Random(DataType::kFloat64, shape, 4);
  DeviceTensor dy = runner.Random(DataType::kFloat64, shape, 5);
  const std::vector<double> vdy = Values(dy);
  const DeviceTensor mask = TrainDropout(runner, x, ratio, 9, 1)[1];
  auto f = [&](const std::vector<double>& values) {
    const std::vector<double> y = Values(
        TrainDropout(runner, runner.MakeTensor(DataType::kFloat64, shape, values), ratio, 9, 1)[0]);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += vdy[i] * y[i];
    return sum;
  };
  const std::vector<double> expected = NumericGradient(f, Values(x));
  DeviceTensor r = runner.MakeTensor(DataType::kFloat32, {}, {ratio});
  auto dx = runner.Run(kMicrosoft, "DropoutGrad", {dy, mask, r}, 1);
  ASSERT_TRUE(dx.ok()) << dx.status().ToString();
  ExpectNear(Values((*dx)[0]), expected, 1e-7, 1e-8);
  // training_mode false: the forward was the identity, so is the gradient.
  DeviceTensor off = runner.MakeTensor(DataType::kBool, {}, {0});
  dx = runner.Run(kMicrosoft, "DropoutGrad", {dy, mask, r, off}, 1);
  ASSERT_TRUE(dx.ok()) << dx.status().ToString();
  EXPECT_EQ(Values((*dx)[0]), vdy);
}

// The executor gives each run its step, so a graph's Dropout draws a new mask every step, and a
// resumed run the one of its step.
TEST(DropoutTest, ExecutorDrawsANewMaskEachStep) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", DataType::kFloat32, {4096});
  Value* ratio = b.Input("ratio", DataType::kFloat32, {});
  Value* training = b.Input("training", DataType::kBool, {});
  const std::vector<Value*> inputs = {x, ratio, training};
  const std::vector<std::string> outputs = {"y", "mask"};
  Node* node = b.AddNode("Dropout", inputs, outputs, {Attr("seed", 11)});
  b.Output(node->output(1));
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<Communicator> comm = CreateLocalCommunicator();
  ExecutorOptions options;
  options.bind_state = false;
  auto executor = Executor::Create(graph, *cpu, *comm, registry, options);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  const std::vector<float> ones(4096, 1.0f);
  const float half = 0.5f;
  const bool on = true;
  ASSERT_TRUE((*executor)->SetInput("x", std::as_bytes(std::span(ones))).ok());
  ASSERT_TRUE((*executor)->SetInput("ratio", std::as_bytes(std::span(&half, 1))).ok());
  ASSERT_TRUE((*executor)->SetInput("training", std::as_bytes(std::span(&on, 1))).ok());
  auto mask_of_run = [&](std::optional<int64_t> step) {
    EXPECT_TRUE((step ? (*executor)->Run(*step) : (*executor)->Run()).ok());
    EXPECT_TRUE((*executor)->Synchronize().ok());
    auto mask = (*executor)->Fetch(node->output(1)->name());
    EXPECT_TRUE(mask.ok()) << mask.status().ToString();
    return mask.ok() ? *mask : std::vector<std::byte>{};
  };
  const std::vector<std::byte> step0 = mask_of_run(std::nullopt);
  const std::vector<std::byte> step1 = mask_of_run(std::nullopt);
  EXPECT_NE(step0, step1);
  // A resumed run names its step: it draws what the uninterrupted run drew at that step.
  EXPECT_EQ(mask_of_run(1), step1);
  EXPECT_EQ(mask_of_run(0), step0);
  EXPECT_EQ(mask_of_run(std::nullopt), step1);  // the step after the previous run's
}

// InPlaceAccumulatorV2: adds (or, with the flag, overwrites), from a value of another dtype too;
// without the buffer output it updates its buffer input.
TEST(AccumulatorTest, AccumulatesOverwritesAndUpdatesInPlace) {
  KernelRunner runner;
  DeviceTensor buffer = runner.MakeTensor(DataType::kFloat32, {4}, {1, 2, 3, 4});
  DeviceTensor value = runner.MakeTensor(DataType::kFloat16, {4}, {0.5, 0.25, -1, 2});
  DeviceTensor no = runner.MakeTensor(DataType::kBool, {1}, {0});
  DeviceTensor yes = runner.MakeTensor(DataType::kBool, {1}, {1});
  auto out = runner.Run(kMicrosoft, "InPlaceAccumulatorV2", {buffer, value, no}, 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), std::vector<double>{1});
  EXPECT_EQ((*out)[0].shape(), Shape{1});
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{1.5, 2.25, 2, 6}));
  out = runner.Run(kMicrosoft, "InPlaceAccumulatorV2", {buffer, value, yes}, 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{0.5, 0.25, -1, 2}));
  // ONNX Runtime's training graphs bind only the flag: the buffer itself is updated.
  out = runner.Run(kMicrosoft, "InPlaceAccumulatorV2", {buffer, value}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values(buffer), (std::vector<double>{1.5, 2.25, 2, 6}));
}

}  // namespace
}  // namespace zerograph::runtime
