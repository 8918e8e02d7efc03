#include "onnx/model_parser.h"
#include "onnx/model_writer.h"
#include "onnx/wire_format.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "test_models.h"
#include "zerograph/core/mapped_file.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"

namespace zerograph {
namespace {

using ::testing::HasSubstr;

std::span<const std::byte> AsBytes(const std::string& bytes) {
  return std::as_bytes(std::span(bytes.data(), bytes.size()));
}

// What ModelParser hands over, put back into one message. The nodes are awaited and their names
// read (and put back into the messages they were left out of) a step at a time, as a graph
// builds itself.
StatusOr<std::string> ParseAndReassemble(
    std::span<const std::byte> bytes, int threads,
    std::function<void(std::span<const std::byte>)> done_with = nullptr) {
  constexpr size_t kStep = 1000;
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<ModelParser> parser,
                      ModelParser::Start(bytes, threads, std::move(done_with)));
  ZG_RETURN_IF_ERROR(parser->AwaitSources());
  std::span<onnx::NodeProto* const> nodes;
  NodeNameList names;
  for (size_t begin = 0; begin < parser->num_nodes(); begin += kStep) {
    const size_t end = std::min(parser->num_nodes(), begin + kStep);
    ZG_ASSIGN_OR_RETURN(nodes, parser->AwaitNodes(end));
    names.clear();
    parser->ReadNames(begin, end, names);
    // Copies: a message parsed whole holds its names, and the views then point into it.
    const std::vector<std::string> values(names.values.begin(), names.values.end());
    size_t next = 0;
    for (size_t i = begin; i < end; ++i) {
      const NodeNameList::Entry& entry = names.nodes[i - begin];
      const std::string name(entry.name);
      onnx::NodeProto& node = *nodes[i];
      node.clear_input();
      node.clear_output();
      for (uint32_t k = 0; k < entry.num_inputs; ++k) node.add_input(values[next++]);
      for (uint32_t k = 0; k < entry.num_outputs; ++k) node.add_output(values[next++]);
      if (!name.empty()) node.set_name(name);
    }
  }
  ZG_RETURN_IF_ERROR(parser->AwaitRest());
  std::unique_ptr<ProtoStore> store = parser->TakeStore();
  parser->Stop();
  onnx::GraphProto& graph = *store->model->mutable_graph();
  // The nodes go first: protobuf writes fields in number order, whatever the order of adding.
  for (onnx::NodeProto* node : nodes) graph.mutable_node()->UnsafeArenaAddAllocated(node);
  return store->model->SerializeAsString();
}

std::string PlainlyReserialized(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model.SerializeAsString();
}

// A model with every part of a graph the parser splits out, and others it leaves to protobuf:
// initializers, inputs, outputs and value_info interleaved with nodes, a doc string, a sparse
// initializer, metadata and, unless told otherwise, an unknown field.
std::string MixedModel(int nodes, bool unknown_field = true) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  model.set_doc_string("model doc");
  onnx::StringStringEntryProto* entry = model.add_metadata_props();
  entry->set_key("zerograph.loss");
  entry->set_value("y0");
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("mixed");
  graph.set_doc_string("graph doc");
  graph.add_input()->set_name("x");
  for (int i = 0; i < nodes; ++i) {
    const std::string in = i == 0 ? "x" : StrCat("/layers.", i - 1, "/Relu_output_0");
    const std::string out = StrCat("/layers.", i, "/Relu_output_0");
    onnx::NodeProto& node = *graph.add_node();
    node.set_op_type("Relu");
    node.set_name(StrCat("/layers.", i, "/Relu"));
    node.add_input(in);
    node.add_output(out);
    onnx::AttributeProto& role = *node.add_attribute();
    role.set_name("__op_role");
    role.set_type(onnx::AttributeProto::INT);
    role.set_i(0);
    if (i % 7 == 0) {
      onnx::TensorProto& init = *graph.add_initializer();
      init.set_name(StrCat("w", i));
      init.set_data_type(onnx::TensorProto::FLOAT);
      init.add_dims(2);
      init.add_float_data(1.0f);
      init.add_float_data(static_cast<float>(i));
    }
    if (i % 5 == 0) graph.add_value_info()->set_name(out);
    if (i % 11 == 0) graph.add_output()->set_name(out);
  }
  onnx::SparseTensorProto& sparse = *graph.add_sparse_initializer();
  sparse.mutable_values()->set_name("sparse");
  sparse.mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  std::string bytes = model.SerializeAsString();
  if (!unknown_field) return bytes;
  // Field 4000, a varint: no ONNX field, so protobuf keeps it as unknown.
  bytes += std::string("\x80\xFA\x01\x2A", 4);
  return bytes;
}

TEST(ModelParserTest, HandsOverWhatAPlainParseGivesOnAnyNumberOfThreads) {
  for (int nodes : {0, 1, 255, 256, 257, 5000}) {
    const std::string bytes = MixedModel(nodes);
    const std::string expected = PlainlyReserialized(bytes);
    for (int threads : {1, 2, 3, 8}) {
      StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bytes), threads);
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      EXPECT_TRUE(*parsed == expected) << nodes << " nodes, " << threads << " threads";
    }
  }
}

TEST(ModelParserTest, HandsOverTheCommittedModelsAsAPlainParseDoes) {
  int models = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ZG_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() != ".onnx") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), {});
    for (int threads : {1, 4}) {
      StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bytes), threads);
      ASSERT_TRUE(parsed.ok()) << entry.path() << ": " << parsed.status().ToString();
      EXPECT_TRUE(*parsed == PlainlyReserialized(bytes)) << entry.path();
    }
    ++models;
  }
  EXPECT_GE(models, 2);
}

TEST(ModelParserTest, MergesTwoGraphFieldsAsProtobufDoes) {
  // Two serialized models one after the other parse as one model whose graphs are merged.
  const std::string bytes = MixedModel(10) + MixedModel(20);
  for (int threads : {1, 2}) {
    StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bytes), threads);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_TRUE(*parsed == PlainlyReserialized(bytes));
  }
}

// A model of IR 8 and opset 17 whose graph is the serialized `graph_bytes`.
std::string ModelWithGraph(const std::string& graph_bytes) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  std::string bytes = model.SerializeAsString();
  AppendVarint(bytes, LengthDelimitedTag(kModelGraph));
  AppendVarint(bytes, graph_bytes.size());
  return bytes + graph_bytes;
}

// A model whose graph's fields lie interleaved in the file, as protobuf reads them in any order:
// nodes, initializers, value lists and the graph's own doc string (of which the last counts), one
// message each in turn. It has enough of them that Start lays them out in several parts.
std::string InterleavedModel(int rounds) {
  std::string graph_bytes;
  for (int i = 0; i < rounds; ++i) {
    onnx::GraphProto piece;
    onnx::NodeProto& node = *piece.add_node();
    node.set_op_type("Relu");
    node.add_input(i == 0 ? "x" : StrCat("y", i - 1));
    node.add_output(StrCat("y", i));
    if (i % 3 == 0) {
      onnx::TensorProto& init = *piece.add_initializer();
      init.set_name(StrCat("w", i));
      init.set_data_type(onnx::TensorProto::FLOAT);
      init.add_float_data(static_cast<float>(i));
    }
    if (i % 4 == 0) piece.add_value_info()->set_name(StrCat("y", i));
    if (i % 5 == 0) piece.add_output()->set_name(StrCat("y", i));
    if (i % 7 == 0) piece.add_input()->set_name(StrCat("in", i));
    if (i % 1000 == 0) piece.set_doc_string(StrCat("doc ", i));
    graph_bytes += piece.SerializeAsString();
  }
  return ModelWithGraph(graph_bytes);
}

TEST(ModelParserTest, LaysOutInterleavedFieldsInPartsAsAPlainParseDoes) {
  const int rounds = 3 * static_cast<int>(ModelParser::kFieldsPerMark);
  const std::string bytes = InterleavedModel(rounds);
  const std::string expected = PlainlyReserialized(bytes);
  onnx::ModelProto plain;
  ASSERT_TRUE(plain.ParseFromString(bytes));
  ASSERT_EQ(plain.graph().node_size(), rounds);
  EXPECT_EQ(plain.graph().doc_string(), StrCat("doc ", (rounds - 1) / 1000 * 1000));
  for (int threads : {2, 3, 8}) {
    StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bytes), threads);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_TRUE(*parsed == expected) << threads << " threads";
  }
}

// A large graph is counted from both ends (ModelParser::kBytesPerCountingThread): the second
// count starts at a point found by its bytes. In the second model that point lies in an
// initializer's raw data, in the middle of the graph, which reads as node messages: the second
// count is wrong until it leaves them, and meets the first a few thousand messages later. What is
// parsed is what protobuf parses.
TEST(ModelParserTest, CountsALargeGraphFromBothEndsAsAPlainParseDoes) {
  const std::string interleaved = InterleavedModel(80000);
  ASSERT_GT(interleaved.size(), 2 * ModelParser::kBytesPerCountingThread);

  auto nodes = [](std::string_view prefix, int first, int count) {
    onnx::GraphProto piece;
    for (int i = first; i < first + count; ++i) {
      onnx::NodeProto& node = *piece.add_node();
      node.set_op_type("Relu");
      node.add_input(StrCat(prefix, i));
      node.add_output(StrCat(prefix, i + 1));
    }
    return piece.SerializeAsString();
  };
  onnx::GraphProto decoy;
  onnx::TensorProto& init = *decoy.add_initializer();
  init.set_name("raw");
  init.set_data_type(onnx::TensorProto::UINT8);
  const std::string decoy_nodes = nodes("decoy", 0, 3000);
  init.add_dims(static_cast<int64_t>(decoy_nodes.size()));
  init.set_raw_data(decoy_nodes);
  constexpr int kHalf = 60000;
  const std::string graph_bytes =
      nodes("y", 0, kHalf) + decoy.SerializeAsString() + nodes("y", kHalf, kHalf);
  const std::string with_decoys = ModelWithGraph(graph_bytes);
  ASSERT_GT(with_decoys.size(), 2 * ModelParser::kBytesPerCountingThread);
  const size_t raw_at = graph_bytes.find(decoy_nodes);
  ASSERT_LT(raw_at, graph_bytes.size() / 2);
  ASSERT_GT(raw_at + decoy_nodes.size(), graph_bytes.size() / 2);

  for (const std::string* bytes : {&interleaved, &with_decoys}) {
    const std::string expected = PlainlyReserialized(*bytes);
    for (int threads : {2, 8}) {
      StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(*bytes), threads);
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      EXPECT_TRUE(*parsed == expected) << bytes->size() << " bytes, " << threads << " threads";
    }
  }
}

TEST(ModelParserTest, NamesTheMessageThatDoesNotParse) {
  std::string bytes = MixedModel(3000);
  // Node 2000's name becomes a length-delimited field claiming more bytes than the node holds.
  const std::string name = "/layers.2000/Relu";
  const size_t at = bytes.find(name);
  ASSERT_NE(at, std::string::npos);
  bytes[at - 1] = static_cast<char>(0x7f);
  for (int threads : {1, 2, 8}) {
    StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bytes), threads);
    ASSERT_FALSE(parsed.ok()) << threads << " threads";
    EXPECT_EQ(parsed.status().ExitCode(), kExitBadInput);
    EXPECT_THAT(parsed.status().message(), HasSubstr("not a valid ONNX model"));
    EXPECT_THAT(parsed.status().message(), HasSubstr("a node of the main graph"));
  }
}

// One NodeProto field, serialized: the pieces of a node laid out in any order.
std::string NodeField(const std::function<void(onnx::NodeProto&)>& set) {
  onnx::NodeProto holder;
  set(holder);
  return holder.SerializeAsString();
}

std::string RoleField() {
  return NodeField([](onnx::NodeProto& node) {
    onnx::AttributeProto& role = *node.add_attribute();
    role.set_name("__op_role");
    role.set_type(onnx::AttributeProto::INT);
    role.set_i(0);
  });
}

// A model whose nodes lay their names out as protobuf's serializer never does, but any writer
// may: outputs before inputs, a name given twice (the last wins, even when empty), names after
// the attributes, an input after an output.
std::string OddlyLaidOutModel() {
  auto input = [](const std::string& name) {
    return NodeField([&](onnx::NodeProto& node) { node.add_input(name); });
  };
  auto output = [](const std::string& name) {
    return NodeField([&](onnx::NodeProto& node) { node.add_output(name); });
  };
  auto name = [](const std::string& text) {
    return NodeField([&](onnx::NodeProto& node) { node.set_name(text); });
  };
  auto op = [](const std::string& op_type) {
    return NodeField([&](onnx::NodeProto& node) { node.set_op_type(op_type); });
  };
  const std::string nodes[] = {
      output("a") + input("x") + name("dropped") + op("Relu") + name("") + RoleField(),
      op("Neg") + name("first") + RoleField() + input("a") + output("b") + name("b_node") +
          NodeField([](onnx::NodeProto& node) { node.set_doc_string("doc"); }),
      input("a") + output("c") + op("Add") + input("b") + RoleField(),
  };
  onnx::GraphProto graph;
  graph.set_name("odd");
  onnx::ValueInfoProto& x = *graph.add_input();
  x.set_name("x");
  x.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  graph.add_output()->set_name("c");
  std::string graph_bytes = graph.SerializeAsString();
  for (const std::string& node : nodes) {
    AppendVarint(graph_bytes, LengthDelimitedTag(kGraphNode));
    AppendVarint(graph_bytes, node.size());
    graph_bytes += node;
  }
  return ModelWithGraph(graph_bytes);
}

TEST(ModelParserTest, ReadsNamesLaidOutInAnyOrderAsProtobufDoes) {
  const std::string bytes = OddlyLaidOutModel();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes));
  ASSERT_EQ(model.graph().node_size(), 3);
  ASSERT_TRUE(model.graph().node(0).has_name());
  EXPECT_EQ(model.graph().node(0).name(), "");
  EXPECT_EQ(model.graph().node(1).name(), "b_node");
  EXPECT_EQ(model.graph().node(2).input(1), "b");
  for (int threads : {1, 2}) {
    StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bytes), threads);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_TRUE(*parsed == model.SerializeAsString()) << threads << " threads";
  }

  // Loaded and saved, the model is what protobuf writes for it.
  onnx_test::TempFolder folder;
  const std::string path = folder.Path("odd.onnx");
  std::ofstream(path, std::ios::binary) << bytes;
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ((*graph)->FindValue("b")->producer()->name(), "b_node");
  const std::string saved = folder.Path("saved.onnx");
  ASSERT_TRUE(SaveModel(**graph, saved).ok());
  std::ifstream in(saved, std::ios::binary);
  EXPECT_TRUE(std::string(std::istreambuf_iterator<char>(in), {}) == model.SerializeAsString());
}

// The names are most of a parsed node's memory: the graph keeps one copy per value, so the
// messages go without them.
TEST(ModelParserTest, LeavesNamesOutOfTheNodesMessages) {
  const std::string bytes = MixedModel(600, /*unknown_field=*/false);
  onnx::ModelProto plain;
  ASSERT_TRUE(plain.ParseFromString(bytes));
  StatusOr<std::unique_ptr<ModelParser>> parser = ModelParser::Start(AsBytes(bytes), 2);
  ASSERT_TRUE(parser.ok()) << parser.status().ToString();
  ASSERT_TRUE((*parser)->AwaitSources().ok());
  StatusOr<std::span<onnx::NodeProto* const>> nodes = (*parser)->AwaitNodes(600);
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  NodeNameList names;
  (*parser)->ReadNames(0, 600, names);
  ASSERT_EQ(names.nodes.size(), 600u);
  ASSERT_EQ(names.values.size(), 1200u);
  for (int i = 0; i < 600; ++i) {
    const onnx::NodeProto& node = *(*nodes)[static_cast<size_t>(i)];
    EXPECT_EQ(node.input_size() + node.output_size(), 0);
    EXPECT_FALSE(node.has_name());
    EXPECT_EQ(node.op_type(), "Relu");
    const NodeNameList::Entry& entry = names.nodes[static_cast<size_t>(i)];
    EXPECT_EQ(entry.name, plain.graph().node(i).name());
    ASSERT_EQ(entry.num_inputs, 1u);
    ASSERT_EQ(entry.num_outputs, 1u);
    EXPECT_EQ(names.values[2 * static_cast<size_t>(i)], plain.graph().node(i).input(0));
    EXPECT_EQ(names.values[2 * static_cast<size_t>(i) + 1], plain.graph().node(i).output(0));
  }
  ASSERT_TRUE((*parser)->AwaitRest().ok());
}

TEST(ModelParserTest, RefusesWhatProtobufRefuses) {
  const std::string bytes = MixedModel(100);
  for (const std::string& bad :
       {bytes.substr(0, bytes.size() / 2), std::string("\xff\xff\xff\xff\xff", 5),
        std::string("\x3a\x05\x0a\x09", 4)}) {
    StatusOr<std::string> parsed = ParseAndReassemble(AsBytes(bad), 2);
    ASSERT_FALSE(parsed.ok());
    EXPECT_THAT(parsed.status().message(), HasSubstr("not a valid ONNX model"));
  }
}

// The parser hands the bytes it parsed over a few MB at a time, on the caller's thread; dropping
// their pages from a mapped file as they come changes nothing parsed.
TEST(ModelParserTest, HandsParsedBytesOverAsItGoes) {
  const std::string bytes = MixedModel(40000, /*unknown_field=*/false);
  const std::string expected = PlainlyReserialized(bytes);
  onnx_test::TempFolder folder;
  const std::string path = folder.Path("mixed.onnx");
  std::ofstream(path, std::ios::binary) << bytes;
  const std::thread::id caller = std::this_thread::get_id();
  for (int threads : {1, 2, 8}) {
    StatusOr<std::shared_ptr<const MappedFile>> file =
        MappedFile::Open(path, MappedFile::Pages::kUpFront);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    const std::span<const std::byte> all = (*file)->bytes();
    std::vector<std::span<const std::byte>> ranges;
    StatusOr<std::string> parsed =
        ParseAndReassemble(all, threads, [&](std::span<const std::byte> range) {
          EXPECT_EQ(std::this_thread::get_id(), caller);
          ranges.push_back(range);
          (*file)->Evict(range);
        });
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_TRUE(*parsed == expected) << threads << " threads";

    // Several ranges, in the file, not overlapping, together most of it (the nodes).
    EXPECT_GT(ranges.size(), 2u);
    std::ranges::sort(ranges, {}, [](std::span<const std::byte> r) { return r.data(); });
    size_t covered = 0;
    for (size_t i = 0; i < ranges.size(); ++i) {
      EXPECT_GE(ranges[i].data(), all.data());
      EXPECT_LE(ranges[i].data() + ranges[i].size(), all.data() + all.size());
      if (i > 0) {
        EXPECT_GE(ranges[i].data(), ranges[i - 1].data() + ranges[i - 1].size());
      }
      covered += ranges[i].size();
    }
    EXPECT_GT(covered, all.size() * 9 / 10) << covered << " of " << all.size() << " bytes";
  }
}

// What SerializeModel hands over, put together.
StatusOr<std::string> SerializeInPieces(onnx::ModelProto& model, int threads,
                                        const Graph::HeldFields* held_fields = nullptr) {
  std::mutex mutex;
  std::string out;
  ZG_RETURN_IF_ERROR(SerializeModel(
      model, threads,
      [&](uint64_t offset, std::span<const std::byte> bytes) {
        std::lock_guard<std::mutex> lock(mutex);
        if (out.size() < offset + bytes.size()) out.resize(offset + bytes.size());
        std::memcpy(out.data() + offset, bytes.data(), bytes.size());
        return Status::Ok();
      },
      held_fields));
  return out;
}

TEST(ModelWriterTest, WritesWhatProtobufWritesOnAnyNumberOfThreads) {
  for (int nodes : {0, 1, 255, 256, 257, 5000}) {
    for (bool unknown_field : {false, true}) {
      onnx::ModelProto model;
      ASSERT_TRUE(model.ParseFromString(MixedModel(nodes, unknown_field)));
      const std::string expected = model.SerializeAsString();
      for (int threads : {1, 2, 3, 8}) {
        StatusOr<std::string> written = SerializeInPieces(model, threads);
        ASSERT_TRUE(written.ok()) << written.status().ToString();
        EXPECT_TRUE(*written == expected) << nodes << " nodes, " << threads << " threads";
        // The model is left as it was.
        EXPECT_TRUE(model.SerializeAsString() == expected);
      }
    }
  }
}

// Node fields held beside the messages, given in wire format.
class GivenHeldFields final : public Graph::HeldFields {
 public:
  explicit GivenHeldFields(size_t nodes) : leads(nodes), appendices(nodes) {}
  size_t LeadSize(size_t index) const override { return leads[index].size(); }
  uint8_t* WriteLead(size_t index, uint8_t* out) const override {
    return std::copy(leads[index].begin(), leads[index].end(), out);
  }
  std::span<const std::byte> Appendix(size_t index) const override {
    return AsBytes(appendices[index]);
  }

  std::vector<std::string> leads;
  std::vector<std::string> appendices;
};

// The fields a graph holds for its nodes are written as protobuf writes the nodes holding them:
// the names first, a role after the attributes, before the doc string and domain.
TEST(ModelWriterTest, WritesTheGraphsHeldFieldsAsIfTheNodesHeldThem) {
  for (int nodes : {1, 255, 257, 5000}) {
    for (bool unknown_field : {false, true}) {
      onnx::ModelProto holding;
      ASSERT_TRUE(holding.ParseFromString(MixedModel(nodes, unknown_field)));
      // Every second node has later fields; every third gets a role attribute of its own.
      GivenHeldFields fields(static_cast<size_t>(nodes));
      for (int i = 0; i < nodes; ++i) {
        onnx::NodeProto& node = *holding.mutable_graph()->mutable_node(i);
        if (i % 2 == 0) {
          node.set_doc_string("doc");
          node.set_domain("zerograph.test");
        }
        if (i % 3 != 0) continue;
        onnx::NodeProto holder;
        onnx::AttributeProto& role = *holder.add_attribute();
        role.set_name("__op_role_inferred");
        role.set_type(onnx::AttributeProto::INT);
        role.set_i(i);
        fields.appendices[static_cast<size_t>(i)] = holder.SerializeAsString();
        node.MergeFrom(holder);
      }
      const std::string expected = holding.SerializeAsString();
      // The messages without the fields given beside them.
      onnx::ModelProto model = holding;
      for (int i = 0; i < nodes; ++i) {
        onnx::NodeProto& node = *model.mutable_graph()->mutable_node(i);
        onnx::NodeProto names;
        *names.mutable_input() = node.input();
        *names.mutable_output() = node.output();
        if (!node.name().empty()) names.set_name(node.name());
        fields.leads[static_cast<size_t>(i)] = names.SerializeAsString();
        node.clear_input();
        node.clear_output();
        if (!node.name().empty()) node.clear_name();
        if (i % 3 == 0) node.mutable_attribute()->RemoveLast();
      }
      const std::string unchanged = model.SerializeAsString();
      for (int threads : {1, 2, 8}) {
        StatusOr<std::string> written = SerializeInPieces(model, threads, &fields);
        ASSERT_TRUE(written.ok()) << written.status().ToString();
        EXPECT_TRUE(*written == expected) << nodes << " nodes, " << threads << " threads";
        EXPECT_TRUE(model.SerializeAsString() == unchanged);
      }
    }
  }
}

// A fused bucket's tensor (hundreds of MB) goes to the sink from the message's own bytes: no
// chunk buffer holds a copy of it. Around it, small messages, a large node (a Constant's tensor)
// and fields after raw_data keep protobuf's bytes.
TEST(ModelWriterTest, HandsLargeTensorsOverFromTheirOwnBytes) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(MixedModel(600, /*unknown_field=*/false)));
  onnx::GraphProto& graph = *model.mutable_graph();
  std::vector<const std::string*> large_bytes;
  for (size_t bytes : {size_t{3} << 20, size_t{1} << 20, (size_t{1} << 20) - 100}) {
    onnx::TensorProto& tensor = *graph.add_initializer();
    tensor.set_name(StrCat("fused_", bytes));
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_dims(static_cast<int64_t>(bytes / 4));
    std::string& raw = *tensor.mutable_raw_data();
    raw.resize(bytes);
    for (size_t i = 0; i < bytes; ++i) raw[i] = static_cast<char>(i * 7 + bytes);
    tensor.set_doc_string("after raw_data");
    large_bytes.push_back(&raw);
  }
  onnx::NodeProto& constant = *graph.add_node();
  constant.set_op_type("Constant");
  constant.add_output("c");
  onnx::AttributeProto& value = *constant.add_attribute();
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_data_type(onnx::TensorProto::UINT8);
  value.mutable_t()->add_dims(2 << 20);
  value.mutable_t()->mutable_raw_data()->assign(2 << 20, '\x5a');
  large_bytes.push_back(&value.t().raw_data());
  const std::string expected = model.SerializeAsString();

  for (int threads : {1, 2, 8}) {
    std::mutex mutex;
    std::string out;
    std::vector<std::span<const std::byte>> pieces;
    const Status status =
        SerializeModel(model, threads, [&](uint64_t offset, std::span<const std::byte> bytes) {
          std::lock_guard<std::mutex> lock(mutex);
          if (out.size() < offset + bytes.size()) out.resize(offset + bytes.size());
          std::memcpy(out.data() + offset, bytes.data(), bytes.size());
          pieces.push_back(bytes);
          return Status::Ok();
        });
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(out == expected) << threads << " threads";
    // The tensors of a megabyte or more were handed over as they lie (the Constant's too, inside
    // its node); the one below was copied.
    for (size_t t = 0; t < large_bytes.size(); ++t) {
      const auto own = std::as_bytes(std::span(*large_bytes[t]));
      const bool uncopied = std::ranges::any_of(pieces, [&](std::span<const std::byte> piece) {
        return piece.data() == own.data() && piece.size() == own.size();
      });
      EXPECT_EQ(uncopied, t != 2) << "tensor " << t << ", " << threads << " threads";
    }
    // Every piece serialized into a buffer is bounded: none holds a large tensor's copy.
    for (std::span<const std::byte> piece : pieces) {
      const bool own = std::ranges::any_of(large_bytes, [&](const std::string* raw) {
        return piece.data() == reinterpret_cast<const std::byte*>(raw->data());
      });
      if (!own) {
        EXPECT_LT(piece.size(), size_t{2} << 20) << threads << " threads";
      }
    }
  }
}

TEST(ModelWriterTest, WritesTheCommittedModelsAsProtobufDoes) {
  int models = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ZG_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() != ".onnx") continue;
    onnx::ModelProto model;
    std::ifstream file(entry.path(), std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&file)) << entry.path();
    StatusOr<std::string> written = SerializeInPieces(model, 4);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    EXPECT_TRUE(*written == model.SerializeAsString()) << entry.path();
    ++models;
  }
  EXPECT_GE(models, 2);
}

TEST(ModelWriterTest, ReportsTheSinksError) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(MixedModel(3000, /*unknown_field=*/false)));
  const std::string expected = model.SerializeAsString();
  for (int threads : {1, 4}) {
    const Status status = SerializeModel(
        model, threads, [&](uint64_t offset, std::span<const std::byte> bytes) -> Status {
          if (offset + bytes.size() > expected.size() / 2) return UnavailableError("disk full");
          return Status::Ok();
        });
    EXPECT_THAT(status.message(), HasSubstr("disk full"));
    EXPECT_TRUE(model.SerializeAsString() == expected);
  }
}

// A graph large enough that loading it faults its region in on a thread of its own (GraphMemory)
// while the nodes are linked: every node reads and defines what the file says.
TEST(ModelParserTest, LoadModelLinksALargeGraphAsTheFileSays) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(MixedModel(120000, /*unknown_field=*/false)));
  model.clear_metadata_props();  // a plain graph: its zerograph.* keys are a partial set
  onnx_test::TempFolder folder;
  const std::string path = folder.Path("big.onnx");
  ASSERT_TRUE(onnx_test::WriteModelFile(model, path).ok());
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_EQ((*graph)->num_nodes(), static_cast<size_t>(model.graph().node_size()));
  int i = 0;
  for (const Node* node : (*graph)->nodes()) {
    const onnx::NodeProto& expected = model.graph().node(i++);
    ASSERT_EQ(node->name(), expected.name());
    ASSERT_EQ(node->op_type(), expected.op_type()) << node->name();
    ASSERT_EQ(node->num_inputs(), static_cast<size_t>(expected.input_size())) << node->name();
    for (int k = 0; k < expected.input_size(); ++k) {
      const Value* input = node->input(static_cast<size_t>(k));
      ASSERT_EQ(input == nullptr ? "" : input->name(), expected.input(k)) << node->name();
    }
    ASSERT_EQ(node->num_outputs(), static_cast<size_t>(expected.output_size())) << node->name();
    for (int k = 0; k < expected.output_size(); ++k) {
      const Value* output = node->output(static_cast<size_t>(k));
      ASSERT_EQ(output->name(), expected.output(k)) << node->name();
      ASSERT_EQ(output->producer(), node);
    }
  }
  EXPECT_TRUE(Verify(**graph).ok());
}

// A model large enough that LoadModel parses it on several threads, whose node 100 reads a value
// nothing defines: the graph fails while the parser's threads may still run, and must stop them.
TEST(ModelParserTest, LoadModelStopsTheParserWhenTheGraphFails) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(MixedModel(120000)));
  model.mutable_graph()->mutable_node(100)->set_input(0, "ghost");
  onnx_test::TempFolder folder;
  const std::string path = folder.Path("big.onnx");
  ASSERT_TRUE(onnx_test::WriteModelFile(model, path).ok());
  ASSERT_GT(std::filesystem::file_size(path), size_t{8} << 20);
  StatusOr<std::unique_ptr<Graph>> graph = LoadModel(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("'ghost'"));
  EXPECT_THAT(graph.status().message(), HasSubstr("/layers.100/Relu"));
}

}  // namespace
}  // namespace zerograph
