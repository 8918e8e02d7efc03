#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {
namespace {

// The activation bytes the executor plans for x -> Relu -> a -> Relu -> b -> Relu -> c, with
// Shape(a) scheduled last when `shape_of_a` (as a backward pass reads a forward value's shape).
size_t ActivationBytes(bool shape_of_a) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", DataType::kFloat32, {256});
  Value* a = b.SetType(b.Op("Relu", {x}, "a"), DataType::kFloat32, {256});
  Value* bb = b.SetType(b.Op("Relu", {a}, "b"), DataType::kFloat32, {256});
  b.Output(b.SetType(b.Op("Relu", {bb}, "c"), DataType::kFloat32, {256}));
  if (shape_of_a) b.Output(b.SetType(b.Op("Shape", {a}, "s"), DataType::kInt64, {1}));
  KernelRegistry registry;
  EXPECT_TRUE(RegisterCpuKernels(registry).ok());
  std::unique_ptr<Device> device = CreateCpuDevice();
  std::unique_ptr<Communicator> comm = CreateLocalCommunicator();
  ExecutorOptions options;
  options.bind_state = false;
  auto executor = Executor::Create(graph, *device, *comm, registry, std::move(options));
  EXPECT_TRUE(executor.ok()) << executor.status().message();
  return executor.ok() ? (*executor)->memory().activations : 0;
}

// A Shape node reads no data (it is computed while planning): a's buffer is free for c as soon as
// b is computed, as without the Shape.
TEST(ExecutorMemoryTest, ShapeKeepsNoBufferAlive) {
  EXPECT_EQ(ActivationBytes(/*shape_of_a=*/true), ActivationBytes(/*shape_of_a=*/false));
}

// An output nothing reads (SoftmaxCrossEntropyLoss's loss, when a backward recomputes the loss
// for its log_prob) must not share a buffer with its node's other outputs: a freed buffer as large
// as log_prob is free when the node runs, and log_prob must still be the log-softmax (the kernel
// writes the loss last, over log_prob's first element if they shared one).
TEST(ExecutorMemoryTest, UnusedOutputSharesNoBufferWithItsSiblings) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", DataType::kFloat32, {4, 8});
  const int64_t label_dims[] = {4};
  const int64_t label_values[] = {0, 3, 5, 7};
  Value* labels = graph.AddInitializer("labels", DataType::kInt64, label_dims,
                                       std::as_bytes(std::span(label_values)));
  // Two Transposes (neither in place): the first one's buffer is free when the loss runs.
  Value* t = b.SetType(b.Op("Transpose", {x}, "t"), DataType::kFloat32, {8, 4});
  Value* scores = b.SetType(b.Op("Transpose", {t}, "scores"), DataType::kFloat32, {4, 8});
  const std::string names[] = {"loss", "log_prob"};
  Value* const inputs[] = {scores, labels};
  Node* loss = b.AddNode("SoftmaxCrossEntropyLoss", inputs, names);
  // Read by a Transpose (not in place), so log_prob's buffer is one the plan may share.
  b.Output(b.SetType(b.Op("Transpose", {loss->output(1)}, "got"), DataType::kFloat32, {8, 4}));
  Value* expected =
      b.SetType(b.Op("LogSoftmax", {scores}, "log_softmax"), DataType::kFloat32, {4, 8});
  b.Output(b.SetType(b.Op("Transpose", {expected}, "expected"), DataType::kFloat32, {8, 4}));

  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  std::unique_ptr<Device> device = CreateCpuDevice();
  std::unique_ptr<Communicator> comm = CreateLocalCommunicator();
  ExecutorOptions options;
  options.bind_state = false;
  auto executor = Executor::Create(graph, *device, *comm, registry, std::move(options));
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  std::vector<float> values(32);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  ASSERT_TRUE((*executor)->SetInput("x", std::as_bytes(std::span(values))).ok());
  ASSERT_TRUE((*executor)->Run(/*step=*/0).ok());
  StatusOr<std::vector<std::byte>> got = (*executor)->Fetch("got");
  StatusOr<std::vector<std::byte>> want = (*executor)->Fetch("expected");
  ASSERT_TRUE(got.ok() && want.ok());
  std::vector<float> g(32), w(32);
  std::memcpy(g.data(), got->data(), 128);
  std::memcpy(w.data(), want->data(), 128);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-6) << "element " << i;
}

}  // namespace
}  // namespace zerograph::runtime
