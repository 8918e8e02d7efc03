// Loads and saves every model of ONNX's backend test data (Debian's libonnx-testdata) and checks
// that nothing is lost: the graph loaded back equals the one saved, field for field, and the
// saved files pass ONNX's checker.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "test_models.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;
using onnx_test::TempFolder;

constexpr const char* kTestdata = "/usr/share/libonnx-testdata/data";
// The groups of small models; `real` holds only download links.
constexpr const char* kGroups[] = {"node", "simple", "pytorch-converted", "pytorch-operator"};

// Where to save a thousand models: SaveModel syncs every file it writes, which costs seconds on a
// busy disk, so use memory (tmpfs) where the machine has it.
std::unique_ptr<TempFolder> FolderForManyModels() {
  if (fs::is_directory("/dev/shm")) return std::make_unique<TempFolder>("/dev/shm");
  return std::make_unique<TempFolder>();
}

struct TestdataModel {
  std::string path;
  std::string label;  // "<group>__<test name>", unique, used as the saved file's stem
};

std::vector<TestdataModel> FindTestdataModels() {
  std::vector<TestdataModel> models;
  for (const char* group : kGroups) {
    std::error_code error;
    for (const fs::directory_entry& test :
         fs::directory_iterator(fs::path(kTestdata) / group, error)) {
      const fs::path model = test.path() / "model.onnx";
      if (fs::is_regular_file(model)) {
        models.push_back(
            {model.string(), std::string(group) + "__" + test.path().filename().string()});
      }
    }
  }
  std::sort(models.begin(), models.end(),
            [](const TestdataModel& a, const TestdataModel& b) { return a.label < b.label; });
  return models;
}

std::string NameOf(const Value* value) {
  return value == nullptr ? "" : std::string(value->name());
}

std::string Serialized(const onnx::AttributeProto* attribute) {
  return attribute == nullptr ? "<absent>" : attribute->SerializeAsString();
}

// The tensor's bytes, or its message for tensors without a byte layout (strings).
std::string TensorContent(const Tensor& tensor) {
  StatusOr<std::span<const std::byte>> bytes = tensor.Bytes();
  if (!bytes.ok()) return tensor.proto().SerializeAsString();
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

std::string TypeText(const Value* value) {
  std::optional<TensorType> type = value->type();
  return type ? type->ToString() : "<untyped>";
}

// The ONNX model a graph writes, with ir_version cleared (the saved file says 8 by design).
std::string AssembledModel(Graph& graph) {
  std::string bytes;
  Status status = graph.WithModelProto(
      Graph::ExternalDataWriter(), [&](const onnx::ModelProto& m, const Graph::HeldFields& fields) {
        onnx::ModelProto copy = m;
        copy.clear_ir_version();
        // The names and roles the IR writes with the nodes.
        for (int i = 0; i < copy.graph().node_size(); ++i) {
          fields.AddTo(static_cast<size_t>(i), *copy.mutable_graph()->mutable_node(i));
        }
        bytes = copy.SerializeAsString();
        return Status::Ok();
      });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return bytes;
}

std::string OriginalModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  model.clear_ir_version();
  return model.SerializeAsString();
}

// Checks that `b` (loaded back) has what `a` (loaded from the test data) has.
void ExpectSameGraph(Graph& a, Graph& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (Node *x = a.first_node(), *y = b.first_node(); x != nullptr; x = x->next(), y = y->next()) {
    SCOPED_TRACE(std::string("node ") + std::string(x->name()) + " (" + std::string(x->op_type()) +
                 ")");
    EXPECT_EQ(x->op_type(), y->op_type());
    EXPECT_EQ(x->domain(), y->domain());
    EXPECT_EQ(x->name(), y->name());
    ASSERT_EQ(x->num_inputs(), y->num_inputs());
    for (size_t i = 0; i < x->num_inputs(); ++i)
      EXPECT_EQ(NameOf(x->input(i)), NameOf(y->input(i)));
    ASSERT_EQ(x->num_outputs(), y->num_outputs());
    for (size_t i = 0; i < x->num_outputs(); ++i) {
      EXPECT_EQ(NameOf(x->output(i)), NameOf(y->output(i)));
      if (x->output(i) != nullptr) {
        EXPECT_EQ(TypeText(x->output(i)), TypeText(y->output(i)));
      }
    }
    // A role inferred on loading is an attribute only in the saved file (Node::SetRole).
    EXPECT_EQ(x->role_bits(), y->role_bits());
    auto attributes_but_role = [](const Node* node) {
      std::vector<std::string_view> names = node->AttributeNames();
      std::erase(names, kOpRoleAttr);
      return names;
    };
    const std::vector<std::string_view> names = attributes_but_role(x);
    EXPECT_EQ(names, attributes_but_role(y));
    for (std::string_view name : names) {
      EXPECT_EQ(Serialized(x->FindAttribute(name)), Serialized(y->FindAttribute(name))) << name;
    }
  }

  const std::vector<Value*> xs = a.initializers(), ys = b.initializers();
  ASSERT_EQ(xs.size(), ys.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = *xs[i]->initializer();
    const Tensor& y = *ys[i]->initializer();
    EXPECT_EQ(x.name(), y.name());
    EXPECT_EQ(x.dtype(), y.dtype());
    EXPECT_TRUE(std::ranges::equal(x.dims(), y.dims())) << x.name();
    EXPECT_EQ(TensorContent(x), TensorContent(y)) << x.name();
  }

  auto same_values = [](const std::vector<Value*>& xs, const std::vector<Value*>& ys) {
    ASSERT_EQ(xs.size(), ys.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(xs[i]->name(), ys[i]->name());
      EXPECT_EQ(TypeText(xs[i]), TypeText(ys[i])) << xs[i]->name();
    }
  };
  same_values(a.inputs(), b.inputs());
  same_values(a.outputs(), b.outputs());
  EXPECT_EQ(a.metadata(), b.metadata());

  // Everything else (opset imports, value_info, doc strings, functions) in one comparison.
  EXPECT_EQ(AssembledModel(a), AssembledModel(b)) << "the assembled models differ";
}

// Loads each model, saves it into `folder`, and returns how many were saved.
size_t SaveAll(const std::vector<TestdataModel>& models, const TempFolder& folder,
               bool check_round_trip) {
  size_t saved = 0;
  for (const TestdataModel& model : models) {
    SCOPED_TRACE(model.path);
    StatusOr<std::unique_ptr<Graph>> graph = LoadModel(model.path);
    EXPECT_TRUE(graph.ok()) << graph.status().ToString();
    if (!graph.ok()) continue;
    const std::string out = folder.Path(model.label + ".onnx");
    Status status = SaveModel(**graph, out);
    EXPECT_TRUE(status.ok()) << status.ToString();
    if (!status.ok()) continue;
    ++saved;
    if (!check_round_trip) continue;
    StatusOr<std::unique_ptr<Graph>> reloaded = LoadModel(out);
    EXPECT_TRUE(reloaded.ok()) << reloaded.status().ToString();
    if (!reloaded.ok()) continue;
    ExpectSameGraph(**graph, **reloaded);
    // And the file holds exactly what was loaded, bar the IR version.
    EXPECT_EQ(OriginalModel(model.path), OriginalModel(out)) << "saved file differs from input";
  }
  return saved;
}

// Load, save, load back: nodes, attributes, initializers, inputs, outputs, types and metadata are
// the same.
TEST(TestdataRoundTripTest, KeepsEveryModel) {
  const std::vector<TestdataModel> models = FindTestdataModels();
  if (models.empty()) GTEST_SKIP() << "no ONNX test data under " << kTestdata;
  std::unique_ptr<TempFolder> folder = FolderForManyModels();
  EXPECT_EQ(SaveAll(models, *folder, /*check_round_trip=*/true), models.size());
}

// Every saved model passes ONNX 1.12's checker (one Python process for all of them).
TEST(TestdataRoundTripTest, SavedModelsPassOnnxChecker) {
  const std::vector<TestdataModel> models = FindTestdataModels();
  if (models.empty()) GTEST_SKIP() << "no ONNX test data under " << kTestdata;
  std::unique_ptr<TempFolder> folder = FolderForManyModels();
  ASSERT_EQ(SaveAll(models, *folder, /*check_round_trip=*/false), models.size());
  std::string output;
  const int code = onnx_test::RunCommand(std::string(ZG_PYTHON) + " " + ZG_SOURCE_DIR +
                                             "/tests/onnx/check_models.py " + folder->path(),
                                         output);
  EXPECT_EQ(code, 0) << output;
}

// Our own committed training graphs round-trip and pass the checker the same way.
TEST(TestdataRoundTripTest, KeepsOurModels) {
  std::vector<TestdataModel> models;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ZG_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() == ".onnx") {
      models.push_back({entry.path().string(), "ours__" + entry.path().stem().string()});
    }
  }
  ASSERT_GE(models.size(), 2u) << "models/ should hold mlp_demo.onnx and mlp_demo_sgd.onnx";
  std::unique_ptr<TempFolder> folder = FolderForManyModels();
  EXPECT_EQ(SaveAll(models, *folder, /*check_round_trip=*/true), models.size());
  std::string output;
  const int code = onnx_test::RunCommand(std::string(ZG_PYTHON) + " " + ZG_SOURCE_DIR +
                                             "/tests/onnx/check_models.py " + folder->path(),
                                         output);
  EXPECT_EQ(code, 0) << output;
}

}  // namespace
}  // namespace zerograph
