#include <cstdint>
#include <memory>

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

}  // namespace
}  // namespace zerograph::runtime
