#include "zerograph/train/training_graph_check.h"

#include <gtest/gtest.h>

#include <string>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph {
namespace {

using runtime::DeviceType;

class TrainingGraphCheckTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(runtime::RegisterCpuKernels(registry_).ok()); }

  std::string Problems(const Graph& graph) {
    Status status = CheckTrainingGraph(graph, registry_, DeviceType::kCpu);
    EXPECT_FALSE(status.ok());
    return std::string(status.message());
  }

  runtime::KernelRegistry registry_;
};

// A forward model: one problem, with the two ways to make a training graph.
TEST_F(TrainingGraphCheckTest, ForwardModelSaysHowToMakeATrainingGraph) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", DataType::kFloat32, {TensorType::kUnknownDim, 4});
  b.Output(b.Op("Relu", {x}, "y"));
  const std::string message = Problems(graph);
  EXPECT_NE(message.find("not a training graph (no zerograph.loss metadata)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("--train"), std::string::npos) << message;
  EXPECT_NE(message.find("--from-ort"), std::string::npos) << message;
}

// Every problem of one graph in one error: a parameter fed as a graph input, no optimizer, and
// two ops without a CPU kernel.
TEST_F(TrainingGraphCheckTest, ListsEveryProblemAtOnce) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", DataType::kFloat32, {2, 4});
  Value* w = b.Input("w", DataType::kFloat32, {4, 4});
  Value* y = b.Op({"com.example", "Mystery"}, {x, w}, "y");
  Value* loss = b.Op({"com.example", "Enigma"}, {y}, "loss");
  b.Output(loss);
  TrainingSpec spec;
  spec.loss = "loss";
  spec.data_inputs = {"x"};
  WriteTrainingSpec(spec, graph);
  const std::string message = Problems(graph);
  EXPECT_NE(message.find("(3 problems)"), std::string::npos) << message;
  EXPECT_NE(message.find("graph input(s) 'w' are fed by nothing"), std::string::npos) << message;
  EXPECT_NE(message.find("no optimizer node"), std::string::npos) << message;
  EXPECT_NE(message.find("com.example::Mystery"), std::string::npos) << message;
  EXPECT_NE(message.find("com.example::Enigma"), std::string::npos) << message;
}

// ONNX Runtime's training model is recognised by its accumulation buffers.
TEST_F(TrainingGraphCheckTest, RecognisesOnnxRuntimesTrainingModel) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", DataType::kFloat32, {2, 4});
  b.Input("w_grad.accumulation.buffer", DataType::kFloat32, {4});
  b.Input("lazy_reset_grad", DataType::kBool, {1});
  b.Output(b.Op("Relu", {x}, "y"));
  const std::string message = Problems(graph);
  EXPECT_NE(message.find("as in ONNX Runtime's training_model.onnx"), std::string::npos) << message;
}

}  // namespace
}  // namespace zerograph
