#include "test_models.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <onnx/defs/parser.h>

#include "zerograph/core/str_cat.h"

namespace zerograph::onnx_test {
namespace {

namespace fs = std::filesystem;

// The smallest valid model with an initializer: cases break one thing in it.
constexpr const char* kAddModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  add (float[2] x) => (float[2] y)
  <float[2] w = {1.0, 2.0}>
  {
    y = Add(x, w)
  }
)";

// The data file beside a case's model: "<folder>/<stem>.bin".
std::string DataPath(const std::string& model_path) {
  return fs::path(model_path).replace_extension(".bin").string();
}
std::string DataName(const std::string& model_path) {
  return fs::path(model_path).replace_extension(".bin").filename().string();
}

StatusOr<onnx::ModelProto> AddModel() { return ParseModelText(kAddModel); }

// Moves initializer `w` of the Add model out to external data with the given entries.
void MakeExternal(onnx::ModelProto& model, const std::string& location, const std::string& offset,
                  const std::string& length) {
  onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    onnx::StringStringEntryProto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
}

// 8 bytes: the two floats of `w`.
std::string WBytes() {
  const float values[2] = {1.0f, 2.0f};
  return std::string(reinterpret_cast<const char*>(values), sizeof(values));
}

// --- The cases, one function each -------------------------------------------------------------

Status MissingFile(const std::string& path) {
  std::error_code error;
  fs::remove(path, error);  // a stale file from an earlier run would make the case pass
  return Status::Ok();
}

Status EmptyFile(const std::string& path) { return WriteBytesFile("", path); }

// A valid model cut in half: the graph field claims more bytes than the file holds.
Status Truncated(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  const std::string bytes = model.SerializeAsString();
  return WriteBytesFile(std::string_view(bytes).substr(0, bytes.size() / 2), path);
}

Status RandomBytes(const std::string& path) {
  std::mt19937 random(12345);
  std::string bytes(256, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  return WriteBytesFile(bytes, path);
}

Status IrVersionTooNew(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  model.set_ir_version(11);
  return WriteModelFile(model, path);
}

Status NoGraph(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  model.clear_graph();
  return WriteModelFile(model, path);
}

Status UndefinedValue(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Add(x, ghost)
    }
  )"));
  return WriteModelFile(model, path);
}

// Node "early" reads `a` before node "late" defines it.
Status UseBeforeDefinition(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Relu(a)
      a = Relu(x)
    }
  )"));
  model.mutable_graph()->mutable_node(0)->set_name("early");
  model.mutable_graph()->mutable_node(1)->set_name("late");
  return WriteModelFile(model, path);
}

// `a` and `b` each read the other.
Status Cycle(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] b)
    {
      a = Add(x, b)
      b = Relu(a)
    }
  )"));
  model.mutable_graph()->mutable_node(0)->set_name("add_reads_b");
  model.mutable_graph()->mutable_node(1)->set_name("relu_defines_b");
  return WriteModelFile(model, path);
}

Status DuplicateOutput(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Relu(x)
      y = Neg(x)
    }
  )"));
  return WriteModelFile(model, path);
}

Status DuplicateNodeName(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] z)
    {
      y = Relu(x)
      z = Neg(y)
    }
  )"));
  model.mutable_graph()->mutable_node(0)->set_name("twin");
  model.mutable_graph()->mutable_node(1)->set_name("twin");
  return WriteModelFile(model, path);
}

// A Relu whose op_type was lost on the way (ONNX's checker refuses it).
Status EmptyOpType(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = Relu(x)
    }
  )"));
  model.mutable_graph()->mutable_node(0)->set_name("nameless_op");
  model.mutable_graph()->mutable_node(0)->clear_op_type();
  return WriteModelFile(model, path);
}

// A node in a domain the model does not import (ONNX's checker refuses it: the version decides
// which contract reads the node).
Status NoOpsetImport(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      a = Relu(x)
      b = Relu(a)
      y = Relu(b)
    }
  )"));
  // The first node is in the imported domain; the refusal names the first node that is not.
  for (int i : {1, 2}) {
    model.mutable_graph()->mutable_node(i)->set_name(i == 1 ? "stray" : "later");
    model.mutable_graph()->mutable_node(i)->set_domain("com.example");
  }
  return WriteModelFile(model, path);
}

// LeakyRelu's `alpha` with attribute type 99 on the wire. protobuf keeps an unknown enum value
// of a proto2 field as an unknown field, so the parsed attribute reads as UNDEFINED.
Status UnknownAttributeType(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)
    {
      y = LeakyRelu(x)
    }
  )"));
  onnx::AttributeProto alpha;
  alpha.set_name("alpha");
  alpha.set_f(0.5f);
  // Field 20 (type), wire type 0 (varint): tag 160 = 0xa0 0x01, value 99 = 0x63.
  const std::string wire = alpha.SerializeAsString() + std::string("\xa0\x01\x63", 3);
  onnx::AttributeProto* attribute = model.mutable_graph()->mutable_node(0)->add_attribute();
  ZG_RETURN_IF_NOT(attribute->ParseFromString(wire), "cannot build the attribute");
  model.mutable_graph()->mutable_node(0)->set_name("leaky");
  return WriteModelFile(model, path);
}

Status ExternalParentDir(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  MakeExternal(model, "../" + DataName(path), "0", "8");
  return WriteModelFile(model, path);
}

Status ExternalAbsolutePath(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  ZG_RETURN_IF_ERROR(WriteBytesFile(WBytes(), DataPath(path)));
  MakeExternal(model, fs::absolute(DataPath(path)).string(), "0", "8");
  return WriteModelFile(model, path);
}

// The location is a file in the model's folder, but a symlink to one outside it.
Status ExternalSymlinkEscape(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  const std::string link = DataPath(path);
  ::unlink(link.c_str());
  ZG_RETURN_IF_NOT(::symlink("/etc/passwd", link.c_str()) == 0, "cannot make symlink ", link);
  MakeExternal(model, DataName(path), "0", "8");
  return WriteModelFile(model, path);
}

Status ExternalMissingFile(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  MakeExternal(model, "no_such_data.bin", "0", "8");
  return WriteModelFile(model, path);
}

Status ExternalBadOffset(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  ZG_RETURN_IF_ERROR(WriteBytesFile(WBytes(), DataPath(path)));
  MakeExternal(model, DataName(path), "-8", "8");
  return WriteModelFile(model, path);
}

// 8 bytes asked for at offset 4 of an 8-byte file.
Status ExternalPastEnd(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  ZG_RETURN_IF_ERROR(WriteBytesFile(WBytes(), DataPath(path)));
  MakeExternal(model, DataName(path), "4", "8");
  return WriteModelFile(model, path);
}

// float[2] needs 8 bytes; the entry says 4.
Status ExternalLengthMismatch(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  ZG_RETURN_IF_ERROR(WriteBytesFile(WBytes(), DataPath(path)));
  MakeExternal(model, DataName(path), "0", "4");
  return WriteModelFile(model, path);
}

// Initializer `w` of the Add model with a shape no tensor has.
Status NegativeInitializerDim(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  model.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
  return WriteModelFile(model, path);
}

Status UnknownInitializerType(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  model.mutable_graph()->mutable_initializer(0)->set_data_type(99);
  return WriteModelFile(model, path);
}

Status OverflowingInitializerShape(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, AddModel());
  onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
  w->set_dims(0, int64_t{1} << 32);
  w->add_dims(int64_t{1} << 32);
  return WriteModelFile(model, path);
}

Status BadTrainingMetadata(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float loss)
    {
      loss = ReduceSum<keepdims = 0>(x)
    }
  )"));
  auto set = [&](const char* key, const char* value) {
    onnx::StringStringEntryProto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  };
  set("zerograph.format_version", "1");
  set("zerograph.loss", "loss");
  set("zerograph.inputs", R"({"data": ["x")");  // unterminated JSON
  return WriteModelFile(model, path);
}

}  // namespace

const std::vector<BadModel>& BadModels() {
  static const std::vector<BadModel> cases = {
      {"missing_file", "No such file", MissingFile},
      {"empty_file", "is empty", EmptyFile},
      {"truncated", "not a valid ONNX model", Truncated},
      {"random_bytes", "not a valid ONNX model", RandomBytes},
      {"ir_version_too_new", "ir_version 11", IrVersionTooNew},
      {"no_graph", "no graph", NoGraph},
      {"undefined_value", "'ghost'", UndefinedValue},
      {"use_before_definition", "node 'early'", UseBeforeDefinition},
      {"cycle", "node 'add_reads_b'", Cycle},
      {"duplicate_output", "'y'", DuplicateOutput},
      {"duplicate_node_name", "'twin'", DuplicateNodeName},
      {"unknown_attribute_type", "'alpha'", UnknownAttributeType},
      {"empty_op_type", "node 'nameless_op' (): has no op_type", EmptyOpType},
      {"no_opset_import", "node 'stray' (Relu): its domain 'com.example' has no opset_import",
       NoOpsetImport},
      {"external_parent_dir", "initializer 'w'", ExternalParentDir},
      {"external_absolute_path", "initializer 'w'", ExternalAbsolutePath},
      {"external_symlink_escape", "initializer 'w'", ExternalSymlinkEscape},
      {"external_missing_file", "initializer 'w'", ExternalMissingFile},
      {"external_bad_offset", "initializer 'w'", ExternalBadOffset},
      {"external_past_end", "initializer 'w'", ExternalPastEnd},
      {"external_length_mismatch", "initializer 'w'", ExternalLengthMismatch},
      {"negative_initializer_dim", "initializer 'w': shape [-2] has a negative dimension",
       NegativeInitializerDim},
      {"unknown_initializer_type", "initializer 'w' has unknown element type 99",
       UnknownInitializerType},
      {"overflowing_initializer_shape",
       "initializer 'w': shape [4294967296,4294967296] has more elements than int64 can count",
       OverflowingInitializerShape},
      {"bad_training_metadata", "zerograph.inputs", BadTrainingMetadata},
  };
  return cases;
}

StatusOr<std::string> WriteBadModel(std::string_view name, const std::string& folder) {
  for (const BadModel& model : BadModels()) {
    if (model.name != name) continue;
    std::string path = (fs::path(folder) / StrCat(name, ".onnx")).string();
    ZG_RETURN_IF_ERROR(model.write(path));
    return path;
  }
  return NotFoundError(StrCat("no bad model called '", name, "'"));
}

StatusOr<onnx::ModelProto> ParseModelText(const char* text) {
  onnx::ModelProto model;
  onnx::Common::Status status = onnx::OnnxParser::Parse(model, text);
  ZG_RETURN_IF_NOT(status.IsOK(), "bad model text: ", status.ErrorMessage());
  return model;
}

Status WriteModelFile(const onnx::ModelProto& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ZG_RETURN_IF_NOT(out.is_open() && model.SerializeToOstream(&out) && out.flush(), "cannot write ",
                   path);
  return Status::Ok();
}

Status WriteBytesFile(std::string_view bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ZG_RETURN_IF_NOT(out.flush(), "cannot write ", path);
  return Status::Ok();
}

int RunCommand(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TempFolder::TempFolder() : TempFolder(fs::temp_directory_path().string()) {}

TempFolder::TempFolder(const std::string& parent) {
  std::string pattern = (fs::path(parent) / "zg_onnx_test_XXXXXX").string();
  ZG_CHECK(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
  path_ = pattern;
}

TempFolder::~TempFolder() {
  std::error_code error;
  fs::remove_all(path_, error);
}

std::string TempFolder::Path(std::string_view name) const {
  return (fs::path(path_) / name).string();
}

}  // namespace zerograph::onnx_test
