#include "zerograph/ort_import/import_ort_artifacts.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ort_import/checkpoint_builder.h"
#include "ort_import/ort_checkpoint.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"
#include "zerograph/onnx/save_model.h"
#include "zerograph/tools/run_once.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;
using testing::TestCheckpoint;
using testing::TestOptimizerGroup;
using testing::TestTensor;
using testing::WriteCheckpoint;

const fs::path kMlpArtifacts = fs::path(ZG_SOURCE_DIR) / "tests/data/ort_reference/mlp/artifacts";

// A copy of the mlp reference artifacts that each test may change.
class ImportOrtArtifactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zg_ort_import_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* name : {"training_model.onnx", "optimizer_model.onnx", "checkpoint"}) {
      fs::copy_file(kMlpArtifacts / name, dir_ / name);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The mlp checkpoint's parameters, values included, for a checkpoint written by the test.
  std::vector<TestTensor> MlpParameters() const {
    StatusOr<OrtCheckpoint> checkpoint = ReadOrtCheckpoint((kMlpArtifacts / "checkpoint").string());
    EXPECT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
    std::vector<TestTensor> params;
    for (const OrtTensor& tensor : checkpoint->trainable) {
      std::vector<float> values(tensor.bytes.size() / sizeof(float));
      std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
      params.push_back({tensor.name, tensor.dims, values});
    }
    return params;
  }
  // The same checkpoint with an optimizer group at `step` whose states are `m1` and `m2`
  // everywhere.
  void WriteWithStates(int64_t step, float m1, float m2) const {
    TestCheckpoint checkpoint;
    checkpoint.trainable = MlpParameters();
    checkpoint.group = TestOptimizerGroup{step, 1e-3f, {}};
    for (const TestTensor& param : checkpoint.trainable) {
      const size_t n = param.raw.size() / sizeof(float);
      checkpoint.group->states[param.name] = {{"momentum0", param.dims, std::vector<float>(n, m1)},
                                              {"momentum1", param.dims, std::vector<float>(n, m2)}};
    }
    WriteCheckpoint((dir_ / "checkpoint").string(), checkpoint);
  }
  std::string ImportError() const {
    StatusOr<std::unique_ptr<Graph>> graph = ImportOrtArtifacts(dir_.string());
    return graph.ok() ? "imported" : graph.status().ToString();
  }

  fs::path dir_;
};

std::vector<float> Floats(const Value* value) {
  auto bytes = value->initializer()->Bytes();
  EXPECT_TRUE(bytes.ok());
  std::vector<float> values(bytes->size() / sizeof(float));
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
}

// The mlp artifacts become a training graph: no accumulation left, the forward (ending in the
// marked loss) ahead of the backward, one AdamW with ORT's attributes last, the parameters
// initializers, zero states, data inputs x and target, and a binding for every update.
TEST_F(ImportOrtArtifactsTest, MlpBecomesTrainingGraph) {
  StatusOr<std::unique_ptr<Graph>> imported = ImportOrtArtifacts(dir_.string());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  Graph& graph = **imported;
  std::vector<const Node*> nodes(graph.nodes().begin(), graph.nodes().end());
  size_t forward = 0;
  while (forward < nodes.size() && nodes[forward]->role() == OpRole::kForward) ++forward;
  EXPECT_EQ(forward, 9u);  // 3 × (Gemm, Relu), Sub, Pow, ReduceMean
  EXPECT_TRUE(nodes[forward - 1]->is_loss());
  EXPECT_EQ(nodes[forward - 1]->op_type(), "ReduceMean");
  for (size_t i = forward; i + 1 < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i]->role(), OpRole::kBackward) << nodes[i]->name();
    EXPECT_NE(nodes[i]->op_type(), "InPlaceAccumulatorV2");
  }
  const Node* update = nodes.back();
  ASSERT_TRUE(update->Is(kZerographDomain, "AdamW"));
  EXPECT_EQ(update->role(), OpRole::kOptimize);
  EXPECT_EQ(update->GetFloat("beta1"), 0.9f);
  EXPECT_EQ(update->GetFloat("beta2"), 0.999f);
  EXPECT_EQ(update->GetFloat("epsilon"), 1e-6f);
  EXPECT_EQ(update->GetFloat("weight_decay"), 0.0f);
  EXPECT_EQ(update->GetInt("adam_mode"), 1);
  EXPECT_EQ(update->GetInt("correct_bias"), 1);
  EXPECT_EQ(update->input(2)->name(), "fc0.weight");
  EXPECT_EQ(update->input(8)->name(), "fc0.weight_grad");
  EXPECT_EQ(update->input(14)->name(), "fc0.weight.m1");

  std::vector<std::string> inputs;
  for (const Value* input : graph.inputs()) inputs.emplace_back(input->name());
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "target", "lr", "step"}));
  ASSERT_NE(graph.FindValue("fc1.bias")->initializer(), nullptr);
  EXPECT_EQ(Floats(graph.FindValue("fc2.weight.m2")), std::vector<float>(256, 0.0f));

  auto spec = ReadTrainingSpec(graph);
  ASSERT_TRUE(spec.ok() && spec->has_value()) << spec.status().ToString();
  EXPECT_EQ((*spec)->loss, "onnx::reducemean_output::6");
  EXPECT_EQ((*spec)->data_inputs, (std::vector<std::string>{"x", "target"}));
  EXPECT_EQ((*spec)->lr_input, "lr");
  EXPECT_EQ((*spec)->step_input, "step");
  std::map<std::string, std::string> binding((*spec)->state_binding.begin(),
                                             (*spec)->state_binding.end());
  EXPECT_EQ(binding.size(), 18u);
  EXPECT_EQ(binding["fc1.bias.new"], "fc1.bias");
  EXPECT_EQ(binding["fc1.bias.m1.new"], "fc1.bias.m1");
}

// Optimizer states the checkpoint holds initialize .m1 and .m2.
TEST_F(ImportOrtArtifactsTest, StatesComeFromCheckpoint) {
  WriteWithStates(/*step=*/0, 0.5f, 0.25f);
  StatusOr<std::unique_ptr<Graph>> graph = ImportOrtArtifacts(dir_.string());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(Floats((*graph)->FindValue("fc0.bias.m1")), std::vector<float>(16, 0.5f));
  EXPECT_EQ(Floats((*graph)->FindValue("fc0.bias.m2")), std::vector<float>(16, 0.25f));
}

// A checkpoint whose optimizer has done 5 updates continues at t = 6: the first step of the
// imported graph, run once, corrects the bias with t = 6 (Hugging Face's form, no decay):
//   X' = X - (lr sqrt(1 - b2^t) / (1 - b1^t)) M' / (sqrt(V') + eps)
TEST_F(ImportOrtArtifactsTest, ResumedOptimizerContinuesItsStepCount) {
  WriteWithStates(/*step=*/5, 0.5f, 0.25f);
  StatusOr<std::unique_ptr<Graph>> graph = ImportOrtArtifacts(dir_.string());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::vector<float> x = Floats((*graph)->FindValue("fc2.weight"));
  const std::string model = (dir_ / "imported.onnx").string();
  ASSERT_TRUE(SaveModel(**graph, model).ok());

  const fs::path in = dir_ / "in";
  fs::create_directories(in);
  auto write_input = [&](int index, onnx::TensorProto::DataType dtype, std::vector<int64_t> dims,
                         const void* data, size_t bytes) {
    onnx::TensorProto tensor;
    tensor.set_data_type(dtype);
    for (int64_t dim : dims) tensor.add_dims(dim);
    tensor.set_raw_data(data, bytes);
    std::ofstream(in / ("input_" + std::to_string(index) + ".pb"), std::ios::binary)
        << tensor.SerializeAsString();
  };
  std::vector<float> rows(4 * 16);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.01f * static_cast<float>(i % 23) - 0.1f;
  const float lr = 1e-3f;
  const int64_t step = 1;
  write_input(0, onnx::TensorProto::FLOAT, {4, 16}, rows.data(), rows.size() * 4);
  write_input(1, onnx::TensorProto::FLOAT, {4, 16}, rows.data(), rows.size() * 4);
  write_input(2, onnx::TensorProto::FLOAT, {}, &lr, 4);
  write_input(3, onnx::TensorProto::INT64, {}, &step, 8);
  const fs::path out = dir_ / "out";
  const Status run = runtime::RunOnce(model, in.string(), out.string());
  ASSERT_TRUE(run.ok()) << run.ToString();
  // Outputs: the loss, then X', M', V' of the six parameters; fc2.weight is the fifth.
  auto output = [&](int index) {
    onnx::TensorProto tensor;
    std::ifstream file(out / ("output_" + std::to_string(index) + ".pb"), std::ios::binary);
    EXPECT_TRUE(tensor.ParseFromIstream(&file));
    std::vector<float> values(tensor.raw_data().size() / 4);
    std::memcpy(values.data(), tensor.raw_data().data(), tensor.raw_data().size());
    return values;
  };
  const std::vector<float> x_new = output(1 + 4), m = output(1 + 6 + 4), v = output(1 + 12 + 4);
  ASSERT_EQ(x_new.size(), x.size());
  auto expected = [&](size_t i, double t) {
    const double step_size = lr * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
    return x[i] - step_size * m[i] / (std::sqrt(double{v[i]}) + 1e-6);
  };
  double worst = 0, worst_at_t1 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(x_new[i] - expected(i, 6)));
    worst_at_t1 = std::max(worst_at_t1, std::abs(x_new[i] - expected(i, 1)));
  }
  EXPECT_LT(worst, 1e-7);
  EXPECT_GT(worst_at_t1, 1e-5);  // a run that restarted the count would be this far off
}

// Optimizer states missing for a parameter of a resumed optimizer are refused.
TEST_F(ImportOrtArtifactsTest, ResumedOptimizerWithoutStatesIsRefused) {
  TestCheckpoint checkpoint;
  checkpoint.trainable = MlpParameters();
  checkpoint.group = TestOptimizerGroup{3, 1e-3f, {}};
  WriteCheckpoint((dir_ / "checkpoint").string(), checkpoint);
  EXPECT_NE(ImportError().find("optimizer is at step 3 but holds no states of 'fc0.weight'"),
            std::string::npos)
      << ImportError();
}

// SGDOptimizerV2 becomes org.zerograph SGD: no step input, no states.
TEST_F(ImportOrtArtifactsTest, SgdOptimizerBecomesSgd) {
  onnx::ModelProto model;
  model.set_ir_version(9);
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type("SGDOptimizerV2");
  node->set_domain("com.microsoft");
  std::ofstream(dir_ / "optimizer_model.onnx", std::ios::binary | std::ios::trunc)
      << model.SerializeAsString();
  StatusOr<std::unique_ptr<Graph>> graph = ImportOrtArtifacts(dir_.string());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Node* update = (*graph)->last_node();
  ASSERT_TRUE(update->Is(kZerographDomain, "SGD"));
  EXPECT_EQ(update->num_inputs(), 1u + 2 * 6);
  EXPECT_EQ(update->num_outputs(), 6u);
  EXPECT_EQ((*graph)->FindValue("step"), nullptr);
  EXPECT_EQ((*graph)->FindValue("fc0.weight.m1"), nullptr);
}

// A parameter the training model computes no gradient for, frozen in the checkpoint, becomes a
// constant: an initializer with the checkpoint's values that no optimizer updates.
TEST_F(ImportOrtArtifactsTest, FrozenParameterBecomesConstant) {
  onnx::ModelProto model;
  {
    std::ifstream in(kMlpArtifacts / "training_model.onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  // ONNX Runtime's graph for a frozen fc0.bias: no accumulation of its gradient.
  auto erase = [](auto& field, const std::string& name, auto name_of) {
    for (int i = 0; i < field.size(); ++i) {
      if (name_of(field.Get(i)) != name) continue;
      field.DeleteSubrange(i, 1);
      return true;
    }
    return false;
  };
  onnx::GraphProto& graph = *model.mutable_graph();
  auto info_name = [](const onnx::ValueInfoProto& info) { return info.name(); };
  ASSERT_TRUE(erase(*graph.mutable_node(), "GradientAccumulator2",
                    [](const onnx::NodeProto& node) { return node.name(); }));
  ASSERT_TRUE(erase(*graph.mutable_input(), "fc0.bias_grad.accumulation.buffer", info_name));
  ASSERT_TRUE(erase(*graph.mutable_output(), "fc0.bias_grad.accumulation.out", info_name));
  std::ofstream(dir_ / "training_model.onnx", std::ios::binary | std::ios::trunc)
      << model.SerializeAsString();
  TestCheckpoint checkpoint;
  checkpoint.trainable = MlpParameters();
  checkpoint.frozen = {checkpoint.trainable[1]};
  checkpoint.trainable.erase(checkpoint.trainable.begin() + 1);
  WriteCheckpoint((dir_ / "checkpoint").string(), checkpoint);

  StatusOr<std::unique_ptr<Graph>> imported = ImportOrtArtifacts(dir_.string());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  const Value* bias = (*imported)->FindValue("fc0.bias");
  ASSERT_NE(bias->initializer(), nullptr);
  std::vector<float> expected(16);
  std::memcpy(expected.data(), checkpoint.frozen[0].raw.data(), 64);
  EXPECT_EQ(Floats(bias), expected);
  const Node* update = (*imported)->last_node();
  ASSERT_TRUE(update->Is(kZerographDomain, "AdamW"));
  EXPECT_EQ(update->num_outputs(), 3u * 5);
  for (const Use& use : bias->users()) EXPECT_NE(use.node, update);
  EXPECT_EQ((*imported)->FindValue("fc0.bias.m1"), nullptr);
}

// A parameter the training model trains but the checkpoint freezes: refused, saying so.
TEST_F(ImportOrtArtifactsTest, TrainedParameterFrozenInCheckpointIsRefused) {
  TestCheckpoint checkpoint;
  checkpoint.trainable = MlpParameters();
  checkpoint.frozen = {checkpoint.trainable[1]};
  checkpoint.trainable.erase(checkpoint.trainable.begin() + 1);
  WriteCheckpoint((dir_ / "checkpoint").string(), checkpoint);
  EXPECT_NE(ImportError().find("parameter 'fc0.bias' (trained in the training model) is missing "
                               "from the checkpoint's trainable parameters (it is frozen there)"),
            std::string::npos)
      << ImportError();
}

// A parameter whose shape differs from the training model's: another model's checkpoint.
TEST_F(ImportOrtArtifactsTest, ShapeMismatchIsRefused) {
  TestCheckpoint checkpoint;
  checkpoint.trainable = MlpParameters();
  checkpoint.trainable[2].dims = {32, 8};
  WriteCheckpoint((dir_ / "checkpoint").string(), checkpoint);
  EXPECT_NE(ImportError().find("parameter 'fc1.weight' is float[16,16] in the training model but "
                               "float[32,8] in the checkpoint"),
            std::string::npos)
      << ImportError();
}

// A checkpoint parameter the training model does not read: another model's checkpoint.
TEST_F(ImportOrtArtifactsTest, ExtraCheckpointParameterIsRefused) {
  TestCheckpoint checkpoint;
  checkpoint.trainable = MlpParameters();
  checkpoint.frozen = {{"fc3.weight", {2}, {1, 2}}};
  WriteCheckpoint((dir_ / "checkpoint").string(), checkpoint);
  EXPECT_NE(ImportError().find("holds parameter 'fc3.weight', which the training model does not"),
            std::string::npos)
      << ImportError();
}

// AdamWOptimizer attributes zerograph does not know are refused, not dropped.
TEST_F(ImportOrtArtifactsTest, UnknownOptimizerAttributeIsRefused) {
  onnx::ModelProto model;
  std::ifstream in(kMlpArtifacts / "optimizer_model.onnx", std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&in));
  onnx::AttributeProto* attr = model.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("max_norm");
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(1.0f);
  std::ofstream(dir_ / "optimizer_model.onnx", std::ios::binary | std::ios::trunc)
      << model.SerializeAsString();
  EXPECT_NE(ImportError().find("attribute 'max_norm' is unknown"), std::string::npos)
      << ImportError();
}

}  // namespace
}  // namespace zerograph
