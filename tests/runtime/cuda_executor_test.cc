#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/cuda_test_util.h"
#include "zerograph/ir/graph.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/kernel_registry.h"
#include "zerograph/train/trainer.h"

namespace zerograph::runtime {
namespace {

const std::string kDemo = std::string(ZG_SOURCE_DIR) + "/models/mlp_demo.onnx";
const std::string kDemoData = std::string(ZG_SOURCE_DIR) + "/models/mlp_demo_data.safetensors";

// Losses of `steps` steps of the demo on `device` with `comm`. Unused in a build without CUDA.
[[maybe_unused]] std::vector<float> TrainDemo(Device& device, Communicator& comm,
                                              const KernelRegistry& registry, int64_t steps) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(kDemo);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return {};
  StatusOr<std::unique_ptr<Trainer>> trainer =
      Trainer::Create(**graph, kDemoData, device, comm, registry, /*trace=*/false);
  EXPECT_TRUE(trainer.ok()) << trainer.status().ToString();
  if (!trainer.ok()) return {};
  TrainOptions options;
  options.steps = steps;
  options.schedule.lr = 0.01;
  StatusOr<std::vector<StepResult>> results = (*trainer)->Train(options);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  std::vector<float> losses;
  if (results.ok()) {
    for (const StepResult& r : *results) losses.push_back(r.loss);
  }
  return losses;
}

// The executor on a GPU (parameters uploaded, lr and step kept on the host, state binding copied
// on the device, NCCL for the loss) trains the demo as the CPU does, to fp32 rounding.
TEST(CudaExecutorTest, TrainsDemoLikeCpu) {
  ZG_SKIP_WITHOUT_GPU();
#if ZG_WITH_CUDA
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<Communicator> local = CreateLocalCommunicator();
  const std::vector<float> expected = TrainDemo(*cpu, *local, registry, 5);

  StatusOr<std::unique_ptr<JobRanks>> ranks = JobRanks::Discover();
  ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();
  StatusOr<std::unique_ptr<Device>> gpu = CreateCudaDevice(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  StatusOr<std::unique_ptr<Communicator>> nccl = CreateNcclCommunicator(**gpu, **ranks);
  ASSERT_TRUE(nccl.ok()) << nccl.status().ToString();
  const std::vector<float> losses = TrainDemo(**gpu, **nccl, registry, 5);
  ASSERT_EQ(losses.size(), expected.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(losses[i], expected[i], 1e-4 * std::abs(expected[i]) + 1e-6) << "step " << i;
  }
#endif
}

// Traced on a GPU, every node has an event on its stream's lane whose times come from the GPU's
// timing events: within the step, in order, on the host's clock.
TEST(CudaExecutorTest, TracesGpuTimes) {
  ZG_SKIP_WITHOUT_GPU();
#if ZG_WITH_CUDA
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  StatusOr<std::unique_ptr<JobRanks>> ranks = JobRanks::Discover();
  ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();
  StatusOr<std::unique_ptr<Device>> gpu = CreateCudaDevice(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  StatusOr<std::unique_ptr<Communicator>> nccl = CreateNcclCommunicator(**gpu, **ranks);
  ASSERT_TRUE(nccl.ok()) << nccl.status().ToString();
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(kDemo);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  StatusOr<std::unique_ptr<Trainer>> trainer =
      Trainer::Create(**graph, kDemoData, **gpu, **nccl, registry, /*trace=*/true);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  TrainOptions options;
  options.steps = 2;
  const auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE((*trainer)->Train(options).ok());
  const double begin_us =
      std::chrono::duration<double, std::micro>(before.time_since_epoch()).count();
  const std::vector<TraceEvent> events = (*trainer)->executor().TakeTrace();
  ASSERT_FALSE(events.empty());
  for (const TraceEvent& event : events) {
    EXPECT_GE(event.start_us, begin_us) << event.name;
    EXPECT_GE(event.end_us, event.start_us) << event.name;
    EXPECT_TRUE(event.step == 0 || event.step == 1) << event.name;
  }
#endif
}

}  // namespace
}  // namespace zerograph::runtime
