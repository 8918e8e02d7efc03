#include "zerograph/onnx/load_model.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "test_models.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/onnx/save_model.h"

namespace zerograph {
namespace {

using onnx_test::ParseModelText;
using onnx_test::TempFolder;
using onnx_test::WriteBadModel;
using onnx_test::WriteBytesFile;
using onnx_test::WriteModelFile;
using ::testing::HasSubstr;
using ::testing::Not;

class LoadModelTest : public ::testing::Test {
 protected:
  // Writes bad model `name`, loads it, and checks the refusal: bad input (exit code 2), a message
  // naming the file and the culprit. Returns the status for further checks.
  Status ExpectRefused(std::string_view name) {
    const onnx_test::BadModel* bad = nullptr;
    for (const onnx_test::BadModel& model : onnx_test::BadModels()) {
      if (model.name == name) bad = &model;
    }
    EXPECT_NE(bad, nullptr) << name;
    if (bad == nullptr) return InternalError("no such case");
    StatusOr<std::string> path = WriteBadModel(name, folder_.path());
    EXPECT_TRUE(path.ok()) << path.status().ToString();
    if (!path.ok()) return path.status();
    StatusOr<std::unique_ptr<Graph>> graph = LoadModel(*path);
    EXPECT_FALSE(graph.ok()) << name << " loaded";
    if (graph.ok()) return Status::Ok();
    const Status& status = graph.status();
    EXPECT_EQ(status.ExitCode(), kExitBadInput) << status.ToString();
    EXPECT_THAT(status.message(), HasSubstr("'" + *path + "'"));
    EXPECT_THAT(status.message(), HasSubstr(bad->culprit));
    return status;
  }

  // Writes the model in ONNX's text format as `<folder>/<name>`; returns its path.
  std::string WriteModelText(const char* text, const std::string& name) {
    StatusOr<onnx::ModelProto> model = ParseModelText(text);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    const std::string path = folder_.Path(name);
    if (model.ok()) {
      EXPECT_TRUE(WriteModelFile(*model, path).ok());
    }
    return path;
  }

  // Writes the model in ONNX's text format as `<folder>/train.onnx`, a training graph whose loss
  // is `loss` (zerograph metadata, and the `more` keys); returns its path.
  std::string WriteTrainingModel(
      const char* text, std::initializer_list<std::pair<const char*, const char*>> more = {}) {
    StatusOr<onnx::ModelProto> model = ParseModelText(text);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    const std::string path = folder_.Path("train.onnx");
    if (!model.ok()) return path;
    std::vector<std::pair<const char*, const char*>> metadata = {{"zerograph.format_version", "1"},
                                                                 {"zerograph.loss", "loss"}};
    metadata.insert(metadata.end(), more.begin(), more.end());
    for (auto [key, value] : metadata) {
      onnx::StringStringEntryProto* entry = model->add_metadata_props();
      entry->set_key(key);
      entry->set_value(value);
    }
    EXPECT_TRUE(WriteModelFile(*model, path).ok());
    return path;
  }

  // A plain inference model, `y = Relu(x)`, as `<folder>/plain.onnx`; returns its path.
  std::string WritePlainModel() {
    return WriteModelText(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y)
      {
        y = Relu(x)
      }
    )",
                          "plain.onnx");
  }

  // The Add model of test_models.cc with `w` (float[2]) in external data under `entries`.
  std::string WriteExternalModel(const std::vector<std::pair<std::string, std::string>>& entries,
                                 const std::string& name = "model.onnx") {
    StatusOr<onnx::ModelProto> model = ParseModelText(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      add (float[2] x) => (float[2] y)
      <float[2] w = {0.0, 0.0}>
      {
        y = Add(x, w)
      }
    )");
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    onnx::TensorProto* w = model->mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : entries) {
      onnx::StringStringEntryProto* entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    const std::string path = folder_.Path(name);
    EXPECT_TRUE(WriteModelFile(*model, path).ok());
    return path;
  }

  static std::string Floats(std::initializer_list<float> values) {
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), std::data(values), bytes.size());
    return bytes;
  }

  static std::string BytesOf(const Tensor& tensor) {
    StatusOr<std::span<const std::byte>> bytes = tensor.Bytes();
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    if (!bytes.ok()) return "";
    return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  }

  TempFolder folder_;
};

// --- Files that are not ONNX models -------------------------------------------------------------

// A path with no file behind it is NotFound.
TEST_F(LoadModelTest, RefusesMissingFile) {
  EXPECT_EQ(ExpectRefused("missing_file").code(), StatusCode::kNotFound);
}

// A zero-byte file would parse as an empty ModelProto; say what it is instead.
TEST_F(LoadModelTest, RefusesEmptyFile) {
  EXPECT_EQ(ExpectRefused("empty_file").code(), StatusCode::kDataLoss);
}

// The first half of a valid model.
TEST_F(LoadModelTest, RefusesTruncatedProtobuf) {
  EXPECT_EQ(ExpectRefused("truncated").code(), StatusCode::kDataLoss);
}

// 256 bytes from a seeded generator.
TEST_F(LoadModelTest, RefusesRandomBytes) {
  EXPECT_EQ(ExpectRefused("random_bytes").code(), StatusCode::kDataLoss);
}

// A folder is not a model.
TEST_F(LoadModelTest, RefusesFolder) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(folder_.path());
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().ExitCode(), kExitBadInput) << graph.status().ToString();
  EXPECT_THAT(graph.status().message(), HasSubstr(folder_.path()));
}

// --- Model headers ------------------------------------------------------------------------------

// IR 11 is past what we read ...
TEST_F(LoadModelTest, RefusesIrVersionAbove10) {
  EXPECT_EQ(ExpectRefused("ir_version_too_new").code(), StatusCode::kInvalidArgument);
}

// ... IR 10 is the last we accept.
TEST_F(LoadModelTest, AcceptsIrVersion10) {
  const std::string path = WriteModelText(R"(
    <ir_version: 10, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Relu(x)
    }
  )",
                                          "ir10.onnx");
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ((*graph)->ir_version(), 10);
}

TEST_F(LoadModelTest, RefusesModelWithoutGraph) {
  EXPECT_EQ(ExpectRefused("no_graph").code(), StatusCode::kInvalidArgument);
}

// --- Graph structure (SSA) ----------------------------------------------------------------------

// `y = Add(x, ghost)`: nothing defines `ghost`.
TEST_F(LoadModelTest, RefusesUndefinedValue) {
  EXPECT_EQ(ExpectRefused("undefined_value").code(), StatusCode::kInvalidArgument);
}

// Node "early" reads `a`, which node "late" defines after it.
TEST_F(LoadModelTest, RefusesUseBeforeDefinition) {
  Status status = ExpectRefused("use_before_definition");
  EXPECT_THAT(status.message(), HasSubstr("'a'"));
  EXPECT_THAT(status.message(), HasSubstr("'late'"));
}

// `a = Add(x, b); b = Relu(a)`.
TEST_F(LoadModelTest, RefusesCycle) {
  Status status = ExpectRefused("cycle");
  EXPECT_THAT(status.message(), HasSubstr("'b'"));
}

// `y = Relu(x); y = Neg(x)`.
TEST_F(LoadModelTest, RefusesDuplicateOutputName) {
  EXPECT_EQ(ExpectRefused("duplicate_output").code(), StatusCode::kInvalidArgument);
}

// Two nodes called "twin" (ONNX's checker allows it; our passes find nodes by name).
TEST_F(LoadModelTest, RefusesDuplicateNodeName) {
  EXPECT_EQ(ExpectRefused("duplicate_node_name").code(), StatusCode::kInvalidArgument);
}

// LeakyRelu's `alpha` with attribute type 99.
TEST_F(LoadModelTest, RefusesUnknownAttributeType) {
  Status status = ExpectRefused("unknown_attribute_type");
  EXPECT_THAT(status.message(), HasSubstr("'leaky'"));
}

// A node without an op_type, and one in a domain without an opset_import: ONNX's checker
// refuses both, and so do we, naming the node.
TEST_F(LoadModelTest, RefusesWhatOnnxCheckerRefusesInANode) {
  EXPECT_THAT(ExpectRefused("empty_op_type").message(), HasSubstr("'nameless_op'"));
  EXPECT_THAT(ExpectRefused("no_opset_import").message(), HasSubstr("'stray'"));
}

// --- External data ------------------------------------------------------------------------------

// location "../<case>.bin".
TEST_F(LoadModelTest, RefusesExternalDataInParentFolder) {
  Status status = ExpectRefused("external_parent_dir");
  EXPECT_THAT(status.message(), HasSubstr("../external_parent_dir.bin"));
}

// location "/tmp/.../<case>.bin", even though the file is in the model's folder.
TEST_F(LoadModelTest, RefusesExternalDataAtAbsolutePath) {
  Status status = ExpectRefused("external_absolute_path");
  EXPECT_THAT(status.message(), HasSubstr("absolute"));
}

// location "<case>.bin", a symlink to /etc/passwd.
TEST_F(LoadModelTest, RefusesExternalDataSymlinkOutsideFolder) {
  Status status = ExpectRefused("external_symlink_escape");
  EXPECT_THAT(status.message(), HasSubstr("outside the model's folder"));
}

// A symlink to a file in the same folder is fine.
TEST_F(LoadModelTest, AcceptsExternalDataSymlinkInsideFolder) {
  ASSERT_TRUE(WriteBytesFile(Floats({3, 4}), folder_.Path("real.bin")).ok());
  ASSERT_EQ(::symlink("real.bin", folder_.Path("link.bin").c_str()), 0);
  const std::string path = WriteExternalModel({{"location", "link.bin"}});
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(BytesOf(*(*graph)->FindValue("w")->initializer()), Floats({3, 4}));
}

TEST_F(LoadModelTest, RefusesMissingExternalDataFile) {
  Status status = ExpectRefused("external_missing_file");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("no_such_data.bin"));
}

// offset "-8".
TEST_F(LoadModelTest, RefusesMalformedExternalOffset) {
  Status status = ExpectRefused("external_bad_offset");
  EXPECT_THAT(status.message(), HasSubstr("'-8'"));
}

// Bytes [4, 12) of an 8-byte file ...
TEST_F(LoadModelTest, RefusesExternalDataPastEndOfFile) {
  Status status = ExpectRefused("external_past_end");
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("external_past_end.bin"));
}

// ... bytes [4, 12) of a 12-byte file load.
TEST_F(LoadModelTest, AcceptsExternalDataEndingAtEndOfFile) {
  ASSERT_TRUE(WriteBytesFile(Floats({9, 5, 6}), folder_.Path("w.bin")).ok());
  const std::string path =
      WriteExternalModel({{"location", "w.bin"}, {"offset", "4"}, {"length", "8"}});
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Tensor& w = *(*graph)->FindValue("w")->initializer();
  EXPECT_TRUE(w.is_external());
  EXPECT_EQ(BytesOf(w), Floats({5, 6}));
}

// A length of 4 bytes for a float[2].
TEST_F(LoadModelTest, RefusesExternalLengthMismatch) {
  Status status = ExpectRefused("external_length_mismatch");
  EXPECT_THAT(status.message(), HasSubstr("length 4"));
}

// An external tensor that also keeps its floats inline is ambiguous.
TEST_F(LoadModelTest, RefusesExternalTensorWithInlineData) {
  StatusOr<onnx::ModelProto> model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    add (float[2] x) => (float[2] y)
    <float[2] w = {1.0, 2.0}>
    {
      y = Add(x, w)
    }
  )");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  onnx::TensorProto* w = model->mutable_graph()->mutable_initializer(0);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  ASSERT_TRUE(WriteBytesFile(Floats({1, 2}), folder_.Path("w.bin")).ok());
  const std::string path = folder_.Path("both.onnx");
  ASSERT_TRUE(WriteModelFile(*model, path).ok());
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().ExitCode(), kExitBadInput);
  EXPECT_THAT(graph.status().message(), HasSubstr("initializer 'w'"));
  EXPECT_THAT(graph.status().message(), HasSubstr(path));
}

// Without `offset` and `length`, the tensor is the whole file (ONNX's defaults).
TEST_F(LoadModelTest, ExternalDataDefaultsToWholeFile) {
  ASSERT_TRUE(WriteBytesFile(Floats({7, 8}), folder_.Path("w.bin")).ok());
  const std::string path = WriteExternalModel({{"location", "w.bin"}});
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(BytesOf(*(*graph)->FindValue("w")->initializer()), Floats({7, 8}));
}

// A model in a subfolder, loaded through a relative path, resolves against its own folder.
TEST_F(LoadModelTest, ExternalDataResolvesAgainstModelFolder) {
  std::filesystem::create_directory(folder_.Path("sub"));
  ASSERT_TRUE(WriteBytesFile(Floats({1, 2}), folder_.Path("sub/w.bin")).ok());
  const std::string path = WriteExternalModel({{"location", "w.bin"}}, "sub/model.onnx");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(folder_.path());
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel("sub/model.onnx");
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(BytesOf(*(*graph)->FindValue("w")->initializer()), Floats({1, 2}));
}

// --- Training metadata --------------------------------------------------------------------------

// `zerograph.inputs` holds unterminated JSON (the error comes from ReadTrainingSpec).
TEST_F(LoadModelTest, RefusesMalformedTrainingMetadata) {
  EXPECT_EQ(ExpectRefused("bad_training_metadata").code(), StatusCode::kInvalidArgument);
}

// A training graph without `__op_role` gets roles inferred on load; the loss node is forward with
// the loss bit.
TEST_F(LoadModelTest, InfersRolesOfTrainingGraph) {
  const std::string path = WriteTrainingModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float loss)
    {
      loss = ReduceSum<keepdims = 0>(x)
    }
  )");
  // Verified or not (Verify then runs beside role inference), the roles are the same.
  for (const bool verify : {false, true}) {
    StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path, {.verify = verify});
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    const Node* sum = (*graph)->first_node();
    ASSERT_TRUE(sum->has_role());
    EXPECT_EQ(sum->role(), OpRole::kForward);
    EXPECT_TRUE(sum->is_loss());
  }
}

// A node whose `__op_role` is no integer has no role: loading infers one and writes it over that
// attribute, so the saved node has one `__op_role`, the inferred one.
TEST_F(LoadModelTest, InferredRoleReplacesARoleAttributeOfAnotherType) {
  const std::string path = WriteTrainingModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float loss)
    {
      loss = ReduceSum<keepdims = 0, __op_role = "forward">(x)
    }
  )");
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_EQ((*graph)->first_node()->role_bits(), kLossRoleBit);
  const std::string saved = folder_.Path("saved.onnx");
  ASSERT_TRUE(SaveModel(**graph, saved).ok());

  std::ifstream file(saved, std::ios::binary);
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromIstream(&file));
  std::vector<std::pair<int, int64_t>> roles;  // (type, value) of each `__op_role`
  for (const onnx::AttributeProto& attr : written.graph().node(0).attribute()) {
    if (attr.name() == kOpRoleAttr) roles.emplace_back(attr.type(), attr.i());
  }
  EXPECT_EQ(roles,
            (std::vector<std::pair<int, int64_t>>{{onnx::AttributeProto::INT, kLossRoleBit}}));
}

// Loading infers roles with the state binding: an initializer it names as replaced is state, so
// a gradient scaled by it has two dynamic inputs and stays backward, while the same scale as a
// constant makes the scaling gradient post-processing (optimizer).
TEST_F(LoadModelTest, InfersRolesWithTheStateBinding) {
  for (const bool decay_is_state : {true, false}) {
    const std::string path = WriteTrainingModel(
        R"(
      <ir_version: 8, opset_import: ["" : 17, "org.zerograph" : 1]>
      g (float[2] x, float lr) => (float loss, float[2] w_new, float[1] decay_new)
      <float[2] w = {1.0, 1.0}, float[1] decay = {1.0}, float[1] half = {0.5}>
      {
        loss = ReduceSum<keepdims = 0>(x)
        graw = Mul(x, loss)
        gscaled = Mul(graw, decay)
        w_new = org.zerograph.SGD(lr, w, gscaled)
        decay_new = Mul(decay, half)
      }
    )",
        {{"zerograph.inputs", R"({"data": ["x"], "lr": "lr"})"},
         {"zerograph.state_binding",
          decay_is_state ? R"({"w_new":"w","decay_new":"decay"})" : R"({"w_new":"w"})"}});
    StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path, {.verify = true});
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    const Node* scaling = (*graph)->FindValue("gscaled")->producer();
    ASSERT_TRUE(scaling->has_role());
    EXPECT_EQ(scaling->role(), decay_is_state ? OpRole::kBackward : OpRole::kOptimize);
  }
}

// Asked to, loading hands over the training spec it read, its binding's names as views and
// values resolved, whether it inferred roles with it or, every node annotated, only checked it;
// for a model without one it leaves none.
TEST_F(LoadModelTest, HandsOverTheSpecItResolved) {
  for (const bool annotated : {false, true}) {
    const std::string path =
        WriteTrainingModel(annotated ? R"(
      <ir_version: 8, opset_import: ["" : 17, "org.zerograph" : 1]>
      g (float[2] x, float lr) => (float loss, float[2] w_new, float[1] decay_new)
      <float[2] w = {1.0, 1.0}, float[1] decay = {1.0}, float[1] half = {0.5}>
      {
        loss = ReduceSum<keepdims = 0, __op_role = 256>(x)
        graw = Mul<__op_role = 1>(x, loss)
        w_new = org.zerograph.SGD<__op_role = 2>(lr, w, graw)
        decay_new = Mul<__op_role = 2>(decay, half)
      }
    )"
                                     : R"(
      <ir_version: 8, opset_import: ["" : 17, "org.zerograph" : 1]>
      g (float[2] x, float lr) => (float loss, float[2] w_new, float[1] decay_new)
      <float[2] w = {1.0, 1.0}, float[1] decay = {1.0}, float[1] half = {0.5}>
      {
        loss = ReduceSum<keepdims = 0>(x)
        graw = Mul(x, loss)
        w_new = org.zerograph.SGD(lr, w, graw)
        decay_new = Mul(decay, half)
      }
    )",
                           {{"zerograph.inputs", R"({"data": ["x"], "lr": "lr"})"},
                            {"zerograph.state_binding", R"({"w_new":"w","decay_new":"decay"})"}});
    std::optional<ResolvedTrainingSpec> spec;
    StatusOr<std::unique_ptr<Graph>> graph =
        LoadModel(path, {.verify = true, .resolved_spec = &spec});
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    ASSERT_TRUE(spec.has_value()) << "annotated: " << annotated;
    EXPECT_EQ(spec->spec.loss, "loss");
    EXPECT_EQ(spec->spec.lr_input, "lr");
    using Entry = std::pair<std::string_view, std::string_view>;
    const std::span<const Entry> entries = spec->binding_names.entries();
    EXPECT_EQ(std::vector<Entry>(entries.begin(), entries.end()),
              (std::vector<Entry>{{"w_new", "w"}, {"decay_new", "decay"}}));
    const Graph& g = **graph;
    EXPECT_EQ(spec->binding_new_values,
              (std::vector<const Value*>{g.FindValue("w_new"), g.FindValue("decay_new")}));
    EXPECT_EQ(spec->binding_old_values,
              (std::vector<const Value*>{g.FindValue("w"), g.FindValue("decay")}));
  }
  std::optional<ResolvedTrainingSpec> spec = ResolvedTrainingSpec();
  ASSERT_TRUE(LoadModel(WritePlainModel(), {.resolved_spec = &spec}).ok());
  EXPECT_FALSE(spec.has_value());
}

// A plain inference model keeps its nodes unannotated.
TEST_F(LoadModelTest, LeavesRolesOfPlainModelUnset) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(WritePlainModel());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_FALSE((*graph)->first_node()->has_role());
}

// With `verify`, the graph is also checked against the op contracts (while roles are inferred):
// a Cast without its required `to` loads, but does not verify.
TEST_F(LoadModelTest, VerifiesOnRequest) {
  const std::string path = WriteModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Cast(x)
    }
  )",
                                          "cast.onnx");
  EXPECT_TRUE(LoadModel(path).ok());
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path, {.verify = true});
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(graph.status().message().find("verifying"), std::string::npos)
      << graph.status().message();
  EXPECT_NE(graph.status().message().find("'to'"), std::string::npos) << graph.status().message();
}

// A large model is checked against the op contracts while it is linked (LinkFollower): the first
// fault in node order is named; a fault that loading itself refuses (a node name used twice)
// comes first, and the check stops with the failed load.
TEST_F(LoadModelTest, VerifiesALargeModelAsItIsLinked) {
  constexpr int kNodes = 100'000;
  // Relu nodes n0, n1, ... in a chain, but Casts without their `to` at `casts`, and node `twin`
  // named "n0" as well.
  auto write = [&](std::initializer_list<int> casts, int twin, const std::string& name) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    onnx::GraphProto* graph = model.mutable_graph();
    auto add_value = [](auto* list, const std::string& value_name) {
      onnx::ValueInfoProto* info = list->Add();
      info->set_name(value_name);
      info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    };
    add_value(graph->mutable_input(), "x");
    std::string previous = "x";
    for (int i = 0; i < kNodes; ++i) {
      onnx::NodeProto* node = graph->add_node();
      const bool cast = std::find(casts.begin(), casts.end(), i) != casts.end();
      node->set_op_type(cast ? "Cast" : "Relu");
      node->set_name(i == twin ? "n0" : StrCat("n", i));
      node->add_input(previous);
      previous = StrCat("y", i);
      node->add_output(previous);
    }
    add_value(graph->mutable_output(), previous);
    const std::string path = folder_.Path(name);
    EXPECT_TRUE(WriteModelFile(model, path).ok());
    return path;
  };

  EXPECT_TRUE(LoadModel(write({}, -1, "fine.onnx"), {.verify = true}).ok());
  StatusOr<std::unique_ptr<Graph>> graph =
      LoadModel(write({60'000, 99'000}, -1, "casts.onnx"), {.verify = true});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("verifying"));
  EXPECT_THAT(graph.status().message(), HasSubstr("'n60000'"));
  EXPECT_THAT(graph.status().message(), HasSubstr("'to'"));

  graph = LoadModel(write({1'000}, 90'000, "twin.onnx"), {.verify = true});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("node name used twice"));
  EXPECT_THAT(graph.status().message(), Not(HasSubstr("verifying")));
}

// Every case of the shared catalogue (what make_bad_models writes for the CLI tests) is refused.
TEST_F(LoadModelTest, RefusesEveryBadModel) {
  for (const onnx_test::BadModel& model : onnx_test::BadModels()) {
    SCOPED_TRACE(model.name);
    ExpectRefused(model.name).IgnoreError();
  }
}

}  // namespace
}  // namespace zerograph
