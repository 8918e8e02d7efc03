#include "zerograph/onnx/save_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "test_models.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/fused_bytes.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;
using onnx_test::ParseModelText;
using onnx_test::TempFolder;
using onnx_test::WriteBytesFile;
using onnx_test::WriteModelFile;
using ::testing::HasSubstr;

// Two float tensors in one external data file, `w1` at offset 0 and `w2` at offset 12 (unaligned,
// as ONNX 1.12's Python writer leaves them), plus an inline `b`.
constexpr const char* kExternalModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[3] x) => (float[3] y)
  <float[3] w1 = {0.0, 0.0, 0.0}, float[3] w2 = {0.0, 0.0, 0.0}, float[3] b = {7.0, 8.0, 9.0}>
  {
    t = Mul(x, w1)
    u = Add(t, w2)
    y = Add(u, b)
  }
)";

std::string Floats(std::initializer_list<float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

std::string BytesOf(const Graph& graph, std::string_view name) {
  const Value* value = graph.FindValue(name);
  if (value == nullptr || value->initializer() == nullptr) return "<no initializer>";
  StatusOr<std::span<const std::byte>> bytes = value->initializer()->Bytes();
  if (!bytes.ok()) return bytes.status().ToString();
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

StatusOr<onnx::ModelProto> ReadModelProto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  ZG_RETURN_IF_NOT(in && model.ParseFromIstream(&in), "cannot parse ", path);
  return model;
}

std::string Entry(const onnx::TensorProto& tensor, std::string_view key) {
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == key) return entry.value();
  }
  return "<absent>";
}

std::vector<std::string> FolderContents(const std::string& folder) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class SaveModelTest : public ::testing::Test {
 protected:
  // Writes `model` as `<folder>/in.onnx` with its first initializer, `w1`, in `<folder>/in.bin`,
  // and loads it.
  StatusOr<std::unique_ptr<Graph>> LoadWithExternalW1(onnx::ModelProto& model) {
    onnx::TensorProto* w1 = model.mutable_graph()->mutable_initializer(0);
    w1->clear_float_data();
    w1->set_data_location(onnx::TensorProto::EXTERNAL);
    onnx::StringStringEntryProto* location = w1->add_external_data();
    location->set_key("location");
    location->set_value("in.bin");
    ZG_RETURN_IF_ERROR(WriteBytesFile(Floats({1, 2, 3}), folder_.Path("in.bin")));
    ZG_RETURN_IF_ERROR(WriteModelFile(model, folder_.Path("in.onnx")));
    return LoadModel(folder_.Path("in.onnx"));
  }

  // kExternalModel, loaded by LoadWithExternalW1.
  StatusOr<std::unique_ptr<Graph>> LoadExternalModel() {
    ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(kExternalModel));
    return LoadWithExternalW1(model);
  }

  // Writes kExternalModel as `<folder>/<name>` with its data in `<folder>/<data_name>`.
  std::string WriteExternalModel(const std::string& name, const std::string& data_name) {
    StatusOr<onnx::ModelProto> model = ParseModelText(kExternalModel);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto externalize = [&](int index, const char* offset) {
      onnx::TensorProto* tensor = model->mutable_graph()->mutable_initializer(index);
      tensor->clear_float_data();
      tensor->set_data_location(onnx::TensorProto::EXTERNAL);
      for (auto [key, value] : {std::pair<const char*, std::string>{"location", data_name},
                                {"offset", offset},
                                {"length", "12"}}) {
        onnx::StringStringEntryProto* entry = tensor->add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      }
    };
    externalize(0, "0");
    externalize(1, "12");
    EXPECT_TRUE(WriteBytesFile(Floats({1, 2, 3, 4, 5, 6}), folder_.Path(data_name)).ok());
    const std::string path = folder_.Path(name);
    EXPECT_TRUE(WriteModelFile(*model, path).ok());
    return path;
  }

  void ExpectExternalBytes(const Graph& graph) {
    EXPECT_TRUE(graph.FindValue("w1")->initializer()->is_external());
    EXPECT_TRUE(graph.FindValue("w2")->initializer()->is_external());
    EXPECT_FALSE(graph.FindValue("b")->initializer()->is_external());
    EXPECT_EQ(BytesOf(graph, "w1"), Floats({1, 2, 3}));
    EXPECT_EQ(BytesOf(graph, "w2"), Floats({4, 5, 6}));
    EXPECT_EQ(BytesOf(graph, "b"), Floats({7, 8, 9}));
  }

  TempFolder folder_;
};

// External initializers go to "<model>.data" beside the saved model, page-aligned, with relative
// locations; the bytes survive the round trip and ONNX's checker accepts the result.
TEST_F(SaveModelTest, WritesExternalDataBesideModel) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(WriteExternalModel("in.onnx", "in.bin"));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  fs::create_directory(folder_.Path("out"));
  const std::string saved = folder_.Path("out/saved.onnx");
  ASSERT_TRUE(SaveModel(**graph, saved).ok());

  EXPECT_EQ(FolderContents(folder_.Path("out")),
            (std::vector<std::string>{"saved.onnx", "saved.onnx.data"}));
  StatusOr<onnx::ModelProto> proto = ReadModelProto(saved);
  ASSERT_TRUE(proto.ok()) << proto.status().ToString();
  EXPECT_EQ(proto->ir_version(), 8);
  for (const onnx::TensorProto& tensor : proto->graph().initializer()) {
    if (tensor.name() == "b") {
      EXPECT_NE(tensor.data_location(), onnx::TensorProto::EXTERNAL);
      continue;
    }
    SCOPED_TRACE(tensor.name());
    EXPECT_EQ(tensor.data_location(), onnx::TensorProto::EXTERNAL);
    EXPECT_EQ(Entry(tensor, "location"), "saved.onnx.data");
    EXPECT_EQ(std::stoull(Entry(tensor, "offset")) % 4096, 0u);
    EXPECT_EQ(Entry(tensor, "length"), "12");
  }

  StatusOr<std::unique_ptr<Graph>> reloaded = LoadModel(saved);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  ExpectExternalBytes(**reloaded);

  std::string output;
  EXPECT_EQ(onnx_test::RunCommand(std::string(ZG_PYTHON) + " " + ZG_SOURCE_DIR +
                                      "/tests/onnx/check_models.py " + folder_.Path("out"),
                                  output),
            0)
      << output;
}

// Saving over the model a graph was loaded from replaces its data file while the graph still
// maps the old one; the new files hold the same bytes.
TEST_F(SaveModelTest, OverwritesModelItWasLoadedFrom) {
  const std::string path = WriteExternalModel("model.onnx", "model.onnx.data");
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_TRUE(SaveModel(**graph, path).ok());
  ExpectExternalBytes(**graph);  // the old mapping is still valid
  StatusOr<std::unique_ptr<Graph>> reloaded = LoadModel(path);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  ExpectExternalBytes(**reloaded);
  EXPECT_EQ(FolderContents(folder_.path()),
            (std::vector<std::string>{"model.onnx", "model.onnx.data"}));
}

// A model loaded as IR 10 is written as IR 8; the graph keeps saying 10.
TEST_F(SaveModelTest, WritesIrVersion8) {
  StatusOr<onnx::ModelProto> model = ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Relu(x)
    }
  )");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(WriteModelFile(*model, folder_.Path("ir10.onnx")).ok());
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(folder_.Path("ir10.onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_TRUE(SaveModel(**graph, folder_.Path("ir8.onnx")).ok());
  EXPECT_EQ((*graph)->ir_version(), 10);
  StatusOr<onnx::ModelProto> saved = ReadModelProto(folder_.Path("ir8.onnx"));
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->ir_version(), 8);
}

// An output folder that does not exist is bad input, and nothing is created.
TEST_F(SaveModelTest, RefusesMissingFolderAndLeavesNothing) {
  const std::string path = WriteExternalModel("in.onnx", "in.bin");
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::vector<std::string> before = FolderContents(folder_.path());
  const std::string target = folder_.Path("no/such/folder/out.onnx");
  Status status = SaveModel(**graph, target);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.ExitCode(), kExitBadInput) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("'" + target + "'"));
  EXPECT_EQ(FolderContents(folder_.path()), before);
}

// A path that is a folder is refused before anything is written.
TEST_F(SaveModelTest, RefusesFolderAsPath) {
  auto graph = std::make_unique<Graph>();
  fs::create_directory(folder_.Path("dir.onnx"));
  Status status = SaveModel(*graph, folder_.Path("dir.onnx"));
  EXPECT_EQ(status.ExitCode(), kExitBadInput) << status.ToString();
  EXPECT_EQ(FolderContents(folder_.path()), (std::vector<std::string>{"dir.onnx"}));
}

// A save that fails after it started writing (here: an IR 10 model declaring a float8 value,
// which IR 8 cannot hold, checked once the external data is already written) removes its
// temporary files and leaves the destination as it was.
// A check run beside the writing decides whether the files are put in place: when it fails, its
// error is returned and neither the model nor its external data file is left; when it passes, the
// save is the plain one.
TEST_F(SaveModelTest, CheckBesideTheWritingGatesTheCommit) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadExternalModel();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();

  const std::vector<std::string> before = FolderContents(folder_.path());
  Status refused = SaveModel(**graph, folder_.Path("out.onnx"),
                             {{.run = [] { return InternalError("the check found a fault"); }}});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("the check found a fault"));
  EXPECT_EQ(FolderContents(folder_.path()), before);

  ASSERT_TRUE(
      SaveModel(**graph, folder_.Path("out.onnx"), {{.run = [] { return Status::Ok(); }}}).ok());
  fs::create_directory(folder_.Path("plain"));
  ASSERT_TRUE(SaveModel(**graph, folder_.Path("plain/out.onnx")).ok());
  for (const char* name : {"out.onnx", "out.onnx.data"}) {
    std::ifstream checked(folder_.Path(name), std::ios::binary);
    std::ifstream plain(folder_.Path("plain/" + std::string(name)), std::ios::binary);
    ASSERT_TRUE(checked.good() && plain.good()) << name;
    EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(checked),
                           std::istreambuf_iterator<char>(), std::istreambuf_iterator<char>(plain),
                           std::istreambuf_iterator<char>()))
        << name;
  }
}

// Several checks run at once (each waits here until the other has started, which one after the
// other could not), and the first in the order given that fails decides, whichever ends first.
TEST_F(SaveModelTest, ChecksRunAtOnceAndTheFirstFailureInOrderDecides) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadExternalModel();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();

  std::latch both_started(2);
  auto meet_then = [&both_started](Status result) {
    return [&both_started, result] {
      both_started.count_down();
      // Bounded, so that checks run one after the other fail instead of hanging.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!both_started.try_wait()) {
        if (std::chrono::steady_clock::now() > deadline) {
          return InternalError("the other check did not start meanwhile");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return result;
    };
  };
  const std::vector<std::string> before = FolderContents(folder_.path());
  Status refused = SaveModel(**graph, folder_.Path("out.onnx"),
                             {{.run = meet_then(Status::Ok())},
                              {.run = meet_then(InternalError("the second check's fault"))}});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("the second check's fault"));
  EXPECT_EQ(FolderContents(folder_.path()), before);

  auto fails_after = [](int ms, const char* fault) {
    return [ms, fault] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return InternalError(fault);
    };
  };
  refused = SaveModel(**graph, folder_.Path("out.onnx"),
                      {{.run = fails_after(200, "the first check's fault")},
                       {.run = fails_after(0, "the second check's fault")}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), "the first check's fault");  // the check's own, not the save's
  EXPECT_EQ(FolderContents(folder_.path()), before);
}

TEST_F(SaveModelTest, ChecksStartedWithTheSaveDecideInTheirOrderToo) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadExternalModel();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::vector<std::string> before = FolderContents(folder_.path());

  // A check started with the save is still running when the flush starts the others: the save
  // waits for it, and its failure refuses the files.
  std::atomic<bool> late_started = false;
  auto slow_fault = [&late_started] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!late_started && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return InternalError(late_started ? "the early check's fault" : "the late check never ran");
  };
  auto late_ok = [&late_started] {
    late_started = true;
    return Status::Ok();
  };
  Status refused = SaveModel(**graph, folder_.Path("out.onnx"),
                             {{.run = late_ok}, {.run = slow_fault, .with_the_save = true}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), "the early check's fault");
  EXPECT_EQ(FolderContents(folder_.path()), before);

  // The order given decides, not the order of starting: a late check listed first wins.
  late_started = false;
  auto late_fault = [&late_started] {
    late_started = true;
    return InternalError("the late check's fault");
  };
  refused = SaveModel(**graph, folder_.Path("out.onnx"),
                      {{.run = late_fault}, {.run = slow_fault, .with_the_save = true}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), "the late check's fault");
  EXPECT_EQ(FolderContents(folder_.path()), before);

  // Passing checks of both kinds let the files into place.
  ASSERT_TRUE(
      SaveModel(**graph, folder_.Path("out.onnx"),
                {{.run = late_ok}, {.run = [] { return Status::Ok(); }, .with_the_save = true}})
          .ok());
  EXPECT_TRUE(std::filesystem::exists(folder_.Path("out.onnx")));
}

TEST_F(SaveModelTest, FailedSaveLeavesNoTemporaryFile) {
  StatusOr<onnx::ModelProto> model = ParseModelText(kExternalModel);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  model->set_ir_version(10);
  onnx::ValueInfoProto* info = model->mutable_graph()->add_value_info();
  info->set_name("t");
  info->mutable_type()->mutable_tensor_type()->set_elem_type(17);  // FLOAT8E4M3FN, IR 9
  StatusOr<std::unique_ptr<Graph>> graph = LoadWithExternalW1(*model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();

  const std::vector<std::string> before = FolderContents(folder_.path());
  Status status = SaveModel(**graph, folder_.Path("out.onnx"));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.ExitCode(), kExitBadInput) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("'t'"));
  EXPECT_EQ(FolderContents(folder_.path()), before);
}

// A graph built in memory (no file behind it) saves and loads back.
TEST_F(SaveModelTest, SavesGraphBuiltInMemory) {
  Graph graph;
  graph.SetOpsetVersion("", 17);
  Value* x = graph.AddInput("x", TensorType{DataType::kFloat32, std::vector<int64_t>{2}});
  const std::string bytes = Floats({1, 2});
  Value* w = graph.AddInitializer(
      "w", DataType::kFloat32, std::vector<int64_t>{2},
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
  Node* add = graph.AddNode("Add", "", {x, w}, {"y"}, "add");
  graph.SetValueType(add->output(0), TensorType{DataType::kFloat32, std::vector<int64_t>{2}});
  graph.AddOutput(add->output(0));
  ASSERT_TRUE(SaveModel(graph, folder_.Path("built.onnx")).ok());
  StatusOr<std::unique_ptr<Graph>> reloaded = LoadModel(folder_.Path("built.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_EQ((*reloaded)->num_nodes(), 1u);
  EXPECT_EQ(BytesOf(**reloaded, "w"), bytes);
  EXPECT_EQ(FolderContents(folder_.path()), (std::vector<std::string>{"built.onnx"}));
}

// The file lists the nodes in schedule order however passes moved them: here 40k nodes (the
// writer follows the schedule in pieces of about 2k nodes) with every third moved to the front,
// the last first, and every seventh erased.
TEST_F(SaveModelTest, WritesTheNodesInScheduleOrderAfterMovesAndErasures) {
  constexpr int kNodes = 40'000;
  Graph graph;
  graph.SetOpsetVersion("", 17);
  Value* x = graph.AddInput("x", TensorType{DataType::kFloat32, std::vector<int64_t>{2}});
  std::vector<Node*> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(graph.AddNode("Relu", "", {x}, {StrCat("y", i)}, StrCat("relu", i)));
  }
  for (int i = kNodes - 1; i >= 0; i -= 3) {
    graph.MoveBefore(nodes[static_cast<size_t>(i)], graph.first_node());
  }
  for (int i = 0; i < kNodes; i += 7) {
    ASSERT_TRUE(graph.EraseNode(nodes[static_cast<size_t>(i)]).ok());
  }
  graph.AddOutput(nodes[1]->output(0));
  ASSERT_TRUE(Verify(graph).ok()) << Verify(graph).ToString();
  std::vector<std::string> scheduled;
  for (const Node* node : graph.nodes()) scheduled.emplace_back(node->name());

  ASSERT_TRUE(SaveModel(graph, folder_.Path("moved.onnx")).ok());
  StatusOr<onnx::ModelProto> model = ReadModelProto(folder_.Path("moved.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<std::string> written;
  for (const onnx::NodeProto& node : model->graph().node()) written.push_back(node.name());
  EXPECT_EQ(written, scheduled);
}

// A graph with an initializer fused from two others (1.6 MB: the writer makes it a buffer at a
// time), and a Relu reading it.
struct FusedGraph {
  Graph graph;
  Value* fused = nullptr;
  std::string expected;  // the fused initializer's bytes
};

void BuildFusedGraph(FusedGraph& g, bool materialized) {
  constexpr int64_t kTotal = 400'000;
  g.graph.SetOpsetVersion("", 17);
  const std::string a = Floats({1, 2}), b = Floats({3});
  auto add = [&](std::string_view name, const std::string& bytes) {
    return g.graph
        .AddInitializer(name, DataType::kFloat32,
                        std::vector<int64_t>{static_cast<int64_t>(bytes.size() / sizeof(float))},
                        std::as_bytes(std::span(bytes.data(), bytes.size())))
        ->initializer();
  };
  const Tensor* a_tensor = add("a", a);
  const Tensor* b_tensor = add("b", b);
  g.expected.assign(kTotal * sizeof(float), '\0');
  g.expected.replace(sizeof(float), a.size(), a);
  g.expected.replace(300'000 * sizeof(float), b.size(), b);
  g.fused = g.graph.AddInitializer("fused", DataType::kFloat32, std::vector<int64_t>{kTotal},
                                   std::string());
  StatusOr<std::shared_ptr<const FusedBytes>> bytes =
      FusedBytes::Make({a_tensor, b_tensor}, {1, 300'000}, kTotal, DataType::kFloat32);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const Status set = materialized ? g.graph.SetInitializerBytes(g.fused, std::string(g.expected))
                                  : g.graph.SetInitializerBytes(g.fused, std::move(*bytes));
  ASSERT_TRUE(set.ok()) << set.ToString();
  Node* relu = g.graph.AddNode("Relu", "", {g.fused}, {"y"}, "relu");
  g.graph.SetValueType(relu->output(0),
                       TensorType{DataType::kFloat32, std::vector<int64_t>{kTotal}});
  g.graph.AddOutput(relu->output(0));
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fused initializer's bytes, made as they are written, give the file that holding them would:
// byte for byte, and they read back.
TEST_F(SaveModelTest, WritesAFusedInitializerAsIfItHeldItsBytes) {
  FusedGraph made, held;
  BuildFusedGraph(made, /*materialized=*/false);
  BuildFusedGraph(held, /*materialized=*/true);
  ASSERT_NE(made.fused->initializer()->fused_bytes(), nullptr);
  ASSERT_TRUE(SaveModel(made.graph, folder_.Path("made.onnx")).ok());
  ASSERT_TRUE(SaveModel(held.graph, folder_.Path("held.onnx")).ok());
  const std::string bytes = FileBytes(folder_.Path("made.onnx"));
  EXPECT_GT(bytes.size(), made.expected.size());
  EXPECT_TRUE(bytes == FileBytes(folder_.Path("held.onnx")));
  StatusOr<std::unique_ptr<Graph>> reloaded = LoadModel(folder_.Path("made.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_TRUE(BytesOf(**reloaded, "fused") == made.expected);
}

// A model with fields this build does not know is written plainly, by protobuf: a fused
// initializer's bytes go into the message then.
TEST_F(SaveModelTest, WritesAFusedInitializerOfAModelWithUnknownFields) {
  StatusOr<onnx::ModelProto> model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1.0, 2.0}> { y = Add(x, a) }
  )");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // Field 103 of ModelProto, a varint: unknown to ONNX.
  ASSERT_TRUE(
      WriteBytesFile(model->SerializeAsString() + "\xb8\x06\x01", folder_.Path("in.onnx")).ok());
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(folder_.Path("in.onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Value* fused =
      (*graph)->AddInitializer("fused", DataType::kFloat32, std::vector<int64_t>{4}, std::string());
  StatusOr<std::shared_ptr<const FusedBytes>> bytes =
      FusedBytes::Make({(*graph)->FindValue("a")->initializer()}, {2}, 4, DataType::kFloat32);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE((*graph)->SetInitializerBytes(fused, std::move(*bytes)).ok());
  Node* relu = (*graph)->AddNode("Relu", "", {fused}, {"z"}, "relu");
  (*graph)->SetValueType(relu->output(0), TensorType{DataType::kFloat32, std::vector<int64_t>{4}});
  (*graph)->AddOutput(relu->output(0));
  ASSERT_TRUE(SaveModel(**graph, folder_.Path("out.onnx")).ok());
  StatusOr<onnx::ModelProto> written = ReadModelProto(folder_.Path("out.onnx"));
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_FALSE(written->unknown_fields().empty());
  StatusOr<std::unique_ptr<Graph>> reloaded = LoadModel(folder_.Path("out.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_EQ(BytesOf(**reloaded, "fused"), Floats({0, 0, 1, 2}));
}

}  // namespace
}  // namespace zerograph
