#include "zerograph/models/mlp.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/role_inference.h"
#include "zerograph/ir/shape_inference.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

constexpr DataType kF32 = DataType::kFloat32;

std::map<std::string, int> CountOps(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node* node : graph.nodes()) ++counts[std::string(node->op_type())];
  return counts;
}

std::unique_ptr<Graph> Build(const MlpConfig& config) {
  StatusOr<std::unique_ptr<Graph>> graph = BuildMlpTrainingGraph(config);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(graph).value() : nullptr;
}

TrainingSpec Spec(const Graph& graph) {
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(graph);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() && spec->has_value() ? **spec : TrainingSpec();
}

// Checks that every node carries `__op_role` and that inference, ignoring it, agrees.
void ExpectInferredRolesMatch(const Graph& graph) {
  StatusOr<std::vector<int64_t>> inferred = InferRoleBits(graph, Spec(graph));
  ASSERT_TRUE(inferred.ok()) << inferred.status().ToString();
  int losses = 0;
  for (const Node* node : graph.nodes()) {
    ASSERT_TRUE(node->has_role()) << node->name();
    EXPECT_EQ((*inferred)[node->id()], node->role_bits()) << node->name() << " " << node->op_type();
    losses += node->is_loss() ? 1 : 0;
  }
  EXPECT_EQ(losses, 1);
}

// Checks that KnowableShapes, which runs no shape function, knows what InferShapes infers.
void ExpectKnowableShapesMatchInferred(const Graph& graph) {
  StatusOr<InferredShapes> inferred = InferShapes(graph);
  ASSERT_TRUE(inferred.ok()) << inferred.status().ToString();
  const std::vector<char> knowable = KnowableShapes(graph);
  int64_t known = 0;
  for (const Node* node : graph.nodes()) {
    for (const Value* value : node->outputs()) {
      if (value == nullptr) continue;
      const bool found = inferred->Find(*value) != nullptr;
      EXPECT_EQ(static_cast<bool>(knowable[static_cast<size_t>(value->id())]), found)
          << value->name();
      known += found ? 1 : 0;
    }
  }
  EXPECT_GT(known, 0);
}

// Checks that every value a node computes has a recorded type.
void ExpectEveryValueTyped(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    for (const Value* output : node->outputs()) {
      std::optional<TensorType> type = output->type();
      ASSERT_TRUE(type.has_value()) << output->name();
      EXPECT_TRUE(type->dims.has_value()) << output->name();
    }
  }
}

TensorType Type(DataType dtype, std::vector<int64_t> dims) { return {dtype, std::move(dims)}; }

// A fresh folder under the system's temporary folder, removed with its files.
class TempFolder {
 public:
  TempFolder() {
    path_ = fs::temp_directory_path() / StrCat("zg_mlp_test_", ::getpid(), "_", counter_++);
    fs::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// ONNX's own checker, with strict shape inference (which checks our value_info shapes too).
int RunOnnxChecker(const std::string& path) {
  const std::string command =
      StrCat(ZG_PYTHON,
             " -c \"import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), "
             "full_check=True)\" '",
             path, "'");
  return std::system(command.c_str());
}

std::string CommittedModel(const std::string& name) {
  return StrCat(ZG_SOURCE_DIR, "/models/", name);
}

// The demo is the seed's DPDemoNet step: forward, MSE loss, backward, one AdamW; every value typed.
TEST(MlpTest, DemoStructure) {
  std::unique_ptr<Graph> graph = Build(MlpDemoConfig());
  ASSERT_NE(graph, nullptr);
  EXPECT_TRUE(Verify(*graph).ok());
  EXPECT_EQ(CountOps(*graph), (std::map<std::string, int>{{"Relu", 3},
                                                          {"MatMul", 2},
                                                          {"Sub", 1},
                                                          {"Mul", 2},
                                                          {"ReduceMean", 1},
                                                          {"Constant", 1},
                                                          {"ReluGrad", 2},
                                                          {"Gemm", 3},
                                                          {"AdamW", 1}}));
  EXPECT_EQ(graph->OpsetVersion(""), 17);
  EXPECT_EQ(graph->OpsetVersion(kZerographDomain), 1);
  EXPECT_FALSE(graph->OpsetVersion(kTrainingDomain).has_value());
  EXPECT_EQ(graph->ir_version(), 8);

  EXPECT_EQ(graph->FindValue("x")->type(), Type(kF32, {4, 16}));
  EXPECT_EQ(graph->FindValue("y")->type(), Type(kF32, {4, 8}));
  EXPECT_EQ(graph->FindValue("lr")->type(), Type(kF32, {}));
  EXPECT_EQ(graph->FindValue("step")->type(), Type(DataType::kInt64, {}));
  EXPECT_EQ(graph->FindValue("w0")->type(), Type(kF32, {16, 16}));
  EXPECT_EQ(graph->FindValue("w1")->type(), Type(kF32, {16, 8}));
  EXPECT_EQ(graph->FindValue("z1")->type(), Type(kF32, {4, 8}));
  EXPECT_EQ(graph->FindValue("loss")->type(), Type(kF32, {}));
  EXPECT_EQ(graph->FindValue("w0.grad")->type(), Type(kF32, {16, 16}));
  EXPECT_EQ(graph->FindValue("w1.m2.new")->type(), Type(kF32, {16, 8}));
  ExpectEveryValueTyped(*graph);

  // The schedule is forward, then backward, then the optimizer.
  int64_t last_role = 0;
  for (const Node* node : graph->nodes()) {
    EXPECT_GE(static_cast<int64_t>(node->role()), last_role) << node->name();
    last_role = static_cast<int64_t>(node->role());
  }
  const Node* adamw = graph->last_node();
  ASSERT_TRUE(adamw->Is(kZerographDomain, "AdamW"));
  EXPECT_EQ(adamw->num_inputs(), 10u);
  EXPECT_EQ(adamw->num_outputs(), 6u);
  EXPECT_EQ(adamw->GetFloat("beta1"), 0.9f);
  EXPECT_EQ(adamw->GetFloat("beta2"), 0.999f);
  EXPECT_EQ(adamw->GetFloat("epsilon"), 1e-8f);
  EXPECT_EQ(adamw->GetFloat("weight_decay"), 0.01f);
}

// The metadata names the loss, the fed inputs and a binding for every parameter and state.
TEST(MlpTest, DemoSpec) {
  std::unique_ptr<Graph> graph = Build(MlpDemoConfig());
  ASSERT_NE(graph, nullptr);
  TrainingSpec spec = Spec(*graph);
  EXPECT_EQ(spec.loss, "loss");
  EXPECT_EQ(spec.data_inputs, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(spec.lr_input, "lr");
  EXPECT_EQ(spec.step_input, "step");
  const std::vector<std::pair<std::string, std::string>> binding = {
      {"w0.new", "w0"},       {"w1.new", "w1"},       {"w0.m1.new", "w0.m1"},
      {"w1.m1.new", "w1.m1"}, {"w0.m2.new", "w0.m2"}, {"w1.m2.new", "w1.m2"}};
  EXPECT_EQ(spec.state_binding, binding);
  ASSERT_EQ(graph->outputs().size(), 7u);
  EXPECT_EQ(graph->outputs()[0]->name(), "loss");
}

// The SGD variant updates parameters only and needs no step input.
TEST(MlpTest, DemoSgdStructure) {
  MlpConfig config = MlpDemoConfig();
  config.optimizer = MlpOptimizer::kSgd;
  std::unique_ptr<Graph> graph = Build(config);
  ASSERT_NE(graph, nullptr);
  std::map<std::string, int> counts = CountOps(*graph);
  EXPECT_EQ(counts["SGD"], 1);
  EXPECT_EQ(counts.count("AdamW"), 0u);
  EXPECT_EQ(graph->FindValue("step"), nullptr);
  TrainingSpec spec = Spec(*graph);
  EXPECT_EQ(spec.step_input, "");
  EXPECT_EQ(spec.state_binding.size(), 2u);
  ExpectEveryValueTyped(*graph);
  ExpectInferredRolesMatch(*graph);
}

// The wide model: 8 Gemm layers with bias, about 8.4M parameters.
TEST(MlpTest, WideStructure) {
  MlpConfig config = MlpWideConfig();
  config.batch = 2;
  std::unique_ptr<Graph> graph = Build(config);
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(CountOps(*graph), (std::map<std::string, int>{{"Gemm", 8 + 8 + 7},
                                                          {"Relu", 7},
                                                          {"ReluGrad", 7},
                                                          {"ReduceSum", 8},
                                                          {"Sub", 1},
                                                          {"Mul", 2},
                                                          {"ReduceMean", 1},
                                                          {"Constant", 2},
                                                          {"AdamW", 1}}));
  int64_t params = 0;
  for (const auto& [new_name, old_name] : Spec(*graph).state_binding) {
    if (old_name.find(".m") == std::string::npos) {
      params += *graph->FindValue(old_name)->type()->numel();
    }
  }
  EXPECT_EQ(params, 8 * (1024 * 1024 + 1024));
  EXPECT_EQ(graph->FindValue("b7.grad")->type(), Type(kF32, {1024}));
  ExpectEveryValueTyped(*graph);
  ExpectInferredRolesMatch(*graph);
}

// Role inference agrees with the explicit roles of every generated model.
TEST(MlpTest, InferredRolesMatchExplicitRoles) {
  std::unique_ptr<Graph> demo = Build(MlpDemoConfig());
  ASSERT_NE(demo, nullptr);
  ExpectInferredRolesMatch(*demo);
  for (const char* name :
       {"mlp_demo.onnx", "mlp_demo_sgd.onnx", "mlp_demo_bf16_o1.onnx", "mlp_demo_bf16_o2.onnx"}) {
    SCOPED_TRACE(name);
    StatusOr<std::unique_ptr<Graph>> loaded = LoadModel(CommittedModel(name));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExpectInferredRolesMatch(**loaded);
    ExpectKnowableShapesMatchInferred(**loaded);
  }
}

// The same configuration gives the same weights; another seed gives others.
TEST(MlpTest, WeightsAreDeterministic) {
  std::unique_ptr<Graph> a = Build(MlpDemoConfig());
  std::unique_ptr<Graph> b = Build(MlpDemoConfig());
  MlpConfig other = MlpDemoConfig();
  other.seed = 7;
  std::unique_ptr<Graph> c = Build(other);
  ASSERT_TRUE(a && b && c);
  auto bytes = [](const Graph& graph) {
    StatusOr<std::span<const std::byte>> data = graph.FindValue("w0")->initializer()->Bytes();
    EXPECT_TRUE(data.ok());
    return std::vector<std::byte>(data->begin(), data->end());
  };
  EXPECT_EQ(bytes(*a), bytes(*b));
  EXPECT_NE(bytes(*a), bytes(*c));
  // Xavier-uniform bound for 16 x 16: sqrt(6 / 32).
  std::vector<std::byte> raw = bytes(*a);
  std::vector<float> w0(raw.size() / sizeof(float));
  std::memcpy(w0.data(), raw.data(), raw.size());
  for (float w : w0) EXPECT_LE(std::abs(w), std::sqrt(6.0f / 32.0f));
}

// The forward graph alone has the training graph's forward ops and weights (byte for byte), input
// x and one output, the last activation; it carries no roles and no training metadata.
TEST(MlpTest, ForwardGraphSharesTheTrainingGraphsForward) {
  std::unique_ptr<Graph> training = Build(MlpDemoConfig());
  StatusOr<std::unique_ptr<Graph>> forward = BuildMlpForwardGraph(MlpDemoConfig());
  ASSERT_TRUE(training && forward.ok()) << forward.status().ToString();
  const Graph& graph = **forward;
  EXPECT_EQ(CountOps(graph), (std::map<std::string, int>{{"MatMul", 2}, {"Relu", 3}}));
  ASSERT_EQ(graph.inputs().size(), 1u);
  EXPECT_EQ(graph.inputs()[0]->name(), "x");
  ASSERT_EQ(graph.outputs().size(), 1u);
  EXPECT_EQ(graph.outputs()[0]->name(), "h2");
  EXPECT_FALSE(graph.GetMetadata("zerograph.loss"));
  for (const Node* node : graph.nodes()) EXPECT_FALSE(node->has_role()) << node->name();
  for (const char* name : {"w0", "w1"}) {
    StatusOr<std::span<const std::byte>> a = graph.FindValue(name)->initializer()->Bytes();
    StatusOr<std::span<const std::byte>> b = training->FindValue(name)->initializer()->Bytes();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(std::equal(a->begin(), a->end(), b->begin(), b->end())) << name;
  }
}

// Generated graphs pass ONNX's checker with full shape inference.
TEST(MlpTest, PassesOnnxChecker) {
  TempFolder folder;
  for (MlpOptimizer optimizer : {MlpOptimizer::kAdamW, MlpOptimizer::kSgd}) {
    MlpConfig config = MlpDemoConfig();
    config.optimizer = optimizer;
    std::unique_ptr<Graph> graph = Build(config);
    ASSERT_NE(graph, nullptr);
    const std::string path = folder.Path("model.onnx");
    ASSERT_TRUE(SaveModel(*graph, path).ok());
    EXPECT_EQ(RunOnnxChecker(path), 0);
  }
  MlpConfig wide = MlpWideConfig();
  wide.widths = {32, 32, 32, 8};  // the wide model's structure, at a size quick to check
  std::unique_ptr<Graph> graph = Build(wide);
  ASSERT_NE(graph, nullptr);
  const std::string path = folder.Path("wide.onnx");
  ASSERT_TRUE(SaveModel(*graph, path).ok());
  EXPECT_EQ(RunOnnxChecker(path), 0);
  for (const char* name :
       {"mlp_demo.onnx", "mlp_demo_sgd.onnx", "mlp_demo_bf16_o1.onnx", "mlp_demo_bf16_o2.onnx"}) {
    EXPECT_EQ(RunOnnxChecker(CommittedModel(name)), 0) << name;
  }
}

// The committed dataset has the seed test's 100 samples, named like the graph's data inputs.
TEST(MlpTest, CommittedDatasetMatchesGenerator) {
  StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(CommittedModel("mlp_demo_data.safetensors"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  MlpDataset expected = MakeMlpDataset(MlpDemoConfig(), 100);
  const SafetensorsFile::TensorInfo* x = (*file)->Find("x");
  const SafetensorsFile::TensorInfo* y = (*file)->Find("y");
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->dtype, kF32);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{100, 16}));
  EXPECT_EQ(y->shape, (std::vector<int64_t>{100, 8}));
  ASSERT_EQ(x->bytes.size(), expected.x.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(x->bytes.data(), expected.x.data(), x->bytes.size()), 0);
  ASSERT_EQ(y->bytes.size(), expected.y.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(y->bytes.data(), expected.y.data(), y->bytes.size()), 0);
}

TEST(MlpTest, RejectsBadConfig) {
  MlpConfig config = MlpDemoConfig();
  config.widths = {16};
  EXPECT_EQ(BuildMlpTrainingGraph(config).status().code(), StatusCode::kInvalidArgument);
  config = MlpDemoConfig();
  config.batch = 0;
  EXPECT_EQ(BuildMlpTrainingGraph(config).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zerograph
