#include "zerograph/onnx/load_model.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "onnx/model_parser.h"
#include "zerograph/core/io_error.h"
#include "zerograph/core/mapped_file.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/link_follower.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/proto_store.h"
#include "zerograph/ir/role_inference.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/verify.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

// The newest ONNX IR version we read (ONNX 1.16); we write 8.
constexpr int64_t kMaxIrVersion = 10;

// Bytes of model from which a parsing thread pays for its start.
constexpr size_t kParseBytesPerThread = size_t{4} << 20;

// Opens the model file. A mapping costs no copy, and the parser splits the graph's messages out of
// it and parses them in parallel. Pages are mapped up front: the kernel maps the cached pages in
// one go, not on a fault per page.
StatusOr<std::shared_ptr<const MappedFile>> MapModelFile(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                      MappedFile::Open(path, MappedFile::Pages::kUpFront));
  const size_t size = file->bytes().size();
  if (size == 0) return DataLossError("the file is empty");
  ZG_RETURN_IF_NOT(size <= INT_MAX, "the file is ", size,
                   " bytes; protobuf cannot read a message of 2 GiB or more (keep large "
                   "initializers in external data)");
  return file;
}

Status CheckModelHeader(const onnx::ModelProto& model) {
  ZG_RETURN_IF_NOT(model.ir_version() > 0, "the model has no ir_version");
  ZG_RETURN_IF_NOT(model.ir_version() <= kMaxIrVersion, "the model has ir_version ",
                   model.ir_version(), "; this tool reads IR versions up to ", kMaxIrVersion);
  ZG_RETURN_IF_NOT(model.has_graph(), "the model has no graph");
  return Status::Ok();
}

// ONNX's checker requires an opset_import for every domain a node uses, and so do we: the version
// decides which op contract reads the node (ReduceSum's axes are an attribute before opset 13, an
// input from it on). Checked per domain; only a refusal reads the nodes, to name the first node of
// the domain (the first in the file to fail, as the domains are in the order first met).
Status CheckOpsetImports(const Graph& graph) {
  for (const std::string_view domain : graph.OpDomains()) {
    if (graph.OpsetVersion(domain).has_value()) continue;
    for (const Node* node : graph.stored_nodes()) {
      if (node->domain() != domain) continue;
      return InvalidArgumentError(StrCat("node '", node->name(), "' (", node->op_type(),
                                         "): its domain '", domain.empty() ? "ai.onnx" : domain,
                                         "' has no opset_import; ONNX's checker requires one"));
    }
  }
  return Status::Ok();
}

// A decimal count as ONNX writes `offset` and `length`: digits only, no sign, no overflow.
std::optional<uint64_t> ParseCount(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// True when `path` lies under `folder` (both canonical).
bool IsInside(const fs::path& folder, const fs::path& path) {
  auto [folder_end, path_it] =
      std::mismatch(folder.begin(), folder.end(), path.begin(), path.end());
  return folder_end == folder.end() && path_it != path.end();
}

// Resolves initializers' external data against the model's folder, mapping each data file once.
// A model is untrusted input: its locations must not reach outside its folder, even via symlinks.
class ExternalFiles {
 public:
  explicit ExternalFiles(fs::path folder) : folder_(std::move(folder)) {}

  // Errors name the data file; the graph adds the initializer's name.
  StatusOr<Graph::ExternalBytes> Resolve(const onnx::TensorProto& tensor) {
    std::optional<std::string_view> location, offset_text, length_text;
    for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset_text = entry.value();
      if (entry.key() == "length") length_text = entry.value();
    }
    ZG_RETURN_IF_NOT(location.has_value() && !location->empty(),
                     "external data has no 'location' entry");
    // ONNX: an external tensor holds no data of its own; keeping both would be ambiguous.
    ZG_RETURN_IF_NOT(!tensor.has_raw_data() && tensor.float_data_size() == 0 &&
                         tensor.int32_data_size() == 0 && tensor.int64_data_size() == 0 &&
                         tensor.double_data_size() == 0 && tensor.uint64_data_size() == 0 &&
                         tensor.string_data_size() == 0,
                     "data_location is EXTERNAL, but the tensor also holds data in the model");
    const std::string where = StrCat("external data file '", *location, "'");

    // The containment test below catches `..` too, but naming the refusal helps the user.
    const fs::path relative(*location);
    ZG_RETURN_IF_NOT(!relative.has_root_path(), where,
                     " is an absolute path; locations must be relative to the model's folder");
    for (const fs::path& part : relative) {
      ZG_RETURN_IF_NOT(part != "..", where,
                       " has a '..' component; external data must lie in the model's folder");
    }
    std::error_code error;
    const fs::path resolved = fs::canonical(folder_ / relative, error);
    if (error) {
      if (error == std::errc::no_such_file_or_directory) {
        return NotFoundError(StrCat(where, " does not exist"));
      }
      return IoError(StrCat("cannot resolve ", where), "", error.value());
    }
    ZG_RETURN_IF_NOT(IsInside(folder_, resolved), where, " resolves to '", resolved.string(),
                     "', outside the model's folder");

    std::shared_ptr<const MappedFile>& file = files_[resolved.string()];
    if (file == nullptr) {
      ZG_ASSIGN_OR_RETURN(file, MappedFile::Open(resolved.string()));
    }
    const uint64_t file_size = file->bytes().size();

    uint64_t offset = 0;
    if (offset_text.has_value()) {
      std::optional<uint64_t> parsed = ParseCount(*offset_text);
      ZG_RETURN_IF_NOT(parsed.has_value(), where, ": offset '", *offset_text,
                       "' is not a decimal byte count");
      offset = *parsed;
    }
    uint64_t length = offset <= file_size ? file_size - offset : 0;  // ONNX: absent = to the end
    if (length_text.has_value()) {
      std::optional<uint64_t> parsed = ParseCount(*length_text);
      ZG_RETURN_IF_NOT(parsed.has_value(), where, ": length '", *length_text,
                       "' is not a decimal byte count");
      length = *parsed;
    }
    if (offset > file_size || length > file_size - offset) {
      return DataLossError(StrCat(where, ": offset ", offset, " + length ", length,
                                  " lies past its end (", file_size, " bytes)"));
    }

    std::optional<DataType> dtype = DataTypeFromOnnx(tensor.data_type());
    const uint64_t element_size = dtype.has_value() ? ElementSize(*dtype) : 0;
    ZG_RETURN_IF_NOT(element_size > 0, "element type ", tensor.data_type(),
                     " has no fixed size, so it cannot be stored in ", where);
    uint64_t expected = element_size;
    for (int64_t dim : tensor.dims()) {
      ZG_RETURN_IF_NOT(dim >= 0, "negative dimension ", dim);
      ZG_RETURN_IF_NOT(dim == 0 || expected <= UINT64_MAX / static_cast<uint64_t>(dim),
                       "shape overflows 64 bits");
      expected *= static_cast<uint64_t>(dim);
    }
    ZG_RETURN_IF_NOT(length == expected, where, ": length ", length,
                     " does not match the shape and type, which need ", expected, " bytes");

    return Graph::ExternalBytes{file, file->bytes().subspan(offset, length)};
  }

 private:
  fs::path folder_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;
};

StatusOr<std::unique_ptr<Graph>> LoadModelImpl(const std::string& path,
                                               const LoadOptions& options) {
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MapModelFile(path));
  ZG_ASSIGN_OR_RETURN(
      std::unique_ptr<ModelParser> parser,
      ModelParser::Start(file->bytes(), ThreadsFor(file->bytes().size(), kParseBytesPerThread),
                         [&file](std::span<const std::byte> parsed) { file->Evict(parsed); }));
  ZG_RETURN_IF_ERROR(CheckModelHeader(parser->model()));

  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code error;
  folder = fs::canonical(folder, error);
  if (error) return IoError("cannot resolve the model's folder", "", error.value());
  ExternalFiles external_files(std::move(folder));
  // The graph is built edge by edge from the file and is well formed by then (SSA, order, names);
  // what is left to check is each node against its op contract, which a follower does as the
  // nodes are linked, on a core otherwise idle then. It also reads each node for role inference,
  // which may be needed (a node without a role is known only once all are linked).
  RoleInference inference;
  LinkFollower follower([&inference, &options](std::span<const Node* const> nodes) {
    inference.Add(nodes);
    return options.verify ? VerifyContracts(nodes).WithContext("verifying") : Status::Ok();
  });
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                      Graph::FromModelProto(
                          parser->TakeStore(),
                          [&](const onnx::TensorProto& t) { return external_files.Resolve(t); },
                          parser.get(), &follower));
  // Stopped on every way out before the graph goes (a return below frees it first).
  struct StopFollower {
    LinkFollower& follower;
    ~StopFollower() { follower.Stop(); }
  } stop_follower{follower};
  // The graph holds copies of what it read: the file's pages can go before roles are inferred.
  parser.reset();
  file.reset();
  ZG_RETURN_IF_ERROR(CheckOpsetImports(*graph));

  // A training graph must know each node's role; inferred roles go to the nodes without one. The
  // spec is needed only to infer roles: when every node has one, it is only checked, unless the
  // caller keeps it.
  const StoredNodeRange nodes = graph->stored_nodes();
  const bool roles_missing =
      std::any_of(nodes.begin(), nodes.end(), [](const Node* node) { return !node->has_role(); });
  if (!roles_missing && options.resolved_spec == nullptr) {
    const Status spec_checked = CheckTrainingSpec(*graph).status();
    const Status graph_checked = follower.Join();
    ZG_RETURN_IF_ERROR(spec_checked);
    ZG_RETURN_IF_ERROR(graph_checked);
    return graph;
  }
  // Inference's walk from the loss to the forward needs only the loss's name: it runs beside the
  // reading of the rest of the spec (the state binding's names, a lookup each). Every way out waits
  // for it (the future's end) while the graph is still there.
  std::string walked_loss;
  std::future<StatusOr<std::vector<int64_t>>> forward;
  if (std::optional<std::string_view> loss = DeclaredLoss(*graph);
      roles_missing && loss.has_value()) {
    walked_loss = *loss;
    forward = RunOnTheSide(
        [&built = *graph, &walked_loss] { return InferForwardRoleBits(built, walked_loss); });
  }
  StatusOr<std::optional<ResolvedTrainingSpec>> spec = ReadResolvedTrainingSpec(
      *graph, options.resolved_spec != nullptr ? BindingNames::kViewed : BindingNames::kNone);
  // Inference reads what the follower read of every node: after a failed check, not all of them.
  const Status graph_checked = follower.Join();
  ZG_RETURN_IF_ERROR(spec.status());
  ZG_RETURN_IF_ERROR(graph_checked);
  if (roles_missing && spec->has_value()) {
    const std::string& loss = (*spec)->spec.loss;
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> forward_roles,
                        forward.valid() && walked_loss == loss
                            ? forward.get()
                            : InferForwardRoleBits(*graph, loss));
    ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> roles,
                        inference.Run(*graph, **spec, std::move(forward_roles)));
    ZG_RETURN_IF_ERROR(WriteMissingRoles(*graph, roles));
  }
  if (options.resolved_spec != nullptr) *options.resolved_spec = std::move(*spec);
  return graph;
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path, const LoadOptions& options) {
  StatusOr<std::unique_ptr<Graph>> graph = LoadModelImpl(path, options);
  if (!graph.ok()) return std::move(graph).status().WithContext(StrCat("'", path, "'"));
  return graph;
}

}  // namespace zerograph
