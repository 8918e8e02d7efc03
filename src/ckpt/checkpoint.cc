#include "zerograph/ckpt/checkpoint.h"

#include <fcntl.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checksummed_file.h"
#include "crc32.h"
#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/atomic_file.h"
#include "zerograph/core/hash.h"
#include "zerograph/core/json.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

using Json = nlohmann::ordered_json;

std::string ShapeText(std::span<const int64_t> shape) {
  return StrCat("[", StrJoin(shape, ","), "]");
}

std::string_view DtypeText(DataType dtype) { return SafetensorsDtypeName(dtype).value_or("?"); }

Json TensorJson(const StateTensor& t, bool with_role) {
  Json json = {{"name", t.name}, {"dtype", DtypeText(t.dtype)}, {"shape", t.shape}};
  if (with_role) json["param"] = t.is_param;
  return json;
}

// A file streamed to disk a chunk at a time: where the next chunk goes, and the chunk before,
// whose writeback is in flight.
struct StreamPosition {
  off_t written = 0;
  off_t last = 0;
  off_t last_bytes = 0;
};

// Called after writing `bytes` at `stream.written`: starts writing them to disk, waits for the
// chunk before and drops it from the page cache. The next chunk then reuses those pages: in a VM, a
// page the guest has not touched in a while costs more to fault in than to copy into (before this,
// perf put 78% of a conversion's time in copying into fresh page-cache pages), and the fsync at the
// end finds little left to write. Errors surface there, so these calls go unchecked.
void WriteBehind(int fd, off_t bytes, StreamPosition& stream) {
  ::sync_file_range(fd, stream.written, bytes, SYNC_FILE_RANGE_WRITE);
  if (stream.last_bytes > 0) {
    ::sync_file_range(
        fd, stream.last, stream.last_bytes,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    ::posix_fadvise(fd, stream.last, stream.last_bytes, POSIX_FADV_DONTNEED);
  }
  stream.last = stream.written;
  stream.last_bytes = bytes;
  stream.written += bytes;
}

// Parses {"name", "dtype", "shape"[, "param"]}.
StatusOr<StateTensor> ParseStateTensor(const Json& json, std::string_view where) {
  ZG_RETURN_IF_NOT(json.is_object() && json.contains("name") && json["name"].is_string() &&
                       json.contains("dtype") && json["dtype"].is_string() &&
                       json.contains("shape") && json["shape"].is_array(),
                   where, ": an entry lacks name, dtype or shape");
  StateTensor t;
  t.name = json["name"].get<std::string>();
  std::optional<DataType> dtype = DataTypeFromSafetensors(json["dtype"].get<std::string>());
  ZG_RETURN_IF_NOT(dtype.has_value(), where, ": tensor '", t.name, "' has unknown dtype '",
                   json["dtype"].get<std::string>(), "'");
  t.dtype = *dtype;
  for (const Json& dim : json["shape"]) {
    ZG_RETURN_IF_NOT(IsInt64(dim) && dim.get<int64_t>() >= 0, where, ": tensor '", t.name,
                     "' has a bad dimension ", dim.dump());
    t.shape.push_back(dim.get<int64_t>());
  }
  // Element and byte counts are computed unchecked from here on.
  StatusOr<int64_t> numel = CheckedNumElements(t.shape);
  ZG_RETURN_IF_NOT(numel.ok() && *numel <= std::numeric_limits<int64_t>::max() /
                                               static_cast<int64_t>(ElementSize(t.dtype)),
                   where, ": tensor '", t.name, "' has more bytes than int64 counts");
  if (json.contains("param")) t.is_param = json["param"].is_boolean() && json["param"].get<bool>();
  return t;
}

const CheckpointManifest::File* FindFileEntry(const CheckpointManifest& manifest,
                                              std::string_view name) {
  for (const CheckpointManifest::File& f : manifest.files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Where `info`'s bytes start in `file` (the header's offsets count from the header's end).
int64_t FileOffset(const SafetensorsFile& file, const SafetensorsFile::TensorInfo& info) {
  return info.bytes.data() - file.mapping()->bytes().data();
}

}  // namespace

std::string_view CheckpointKindName(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kUnbalanced:
      return "unbalanced";
    case CheckpointKind::kBalanced:
      return "balanced";
    case CheckpointKind::kConsolidated:
      return "consolidated";
  }
  return "?";
}

StatusOr<CheckpointKind> ParseCheckpointKind(std::string_view name) {
  for (CheckpointKind kind :
       {CheckpointKind::kUnbalanced, CheckpointKind::kBalanced, CheckpointKind::kConsolidated}) {
    if (CheckpointKindName(kind) == name) return kind;
  }
  return InvalidArgumentError(
      StrCat("unknown checkpoint kind '", name, "' (unbalanced, balanced, consolidated)"));
}

int64_t StateTensor::numel() const { return NumElements(shape); }
int64_t CheckpointTensor::numel() const { return NumElements(shape); }

StatusOr<StateModel> StateModel::FromGraph(const Graph& graph) {
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> spec, ReadTrainingSpec(graph));
  ZG_RETURN_IF_NOT(spec.has_value(), "the graph has no zerograph.* metadata, so no training state");
  StateModel model;
  if (spec->layout) {
    ZG_ASSIGN_OR_RETURN(LayoutManifest layout, LayoutManifest::FromJson(*spec->layout));
    model.layout = std::move(layout);
  }
  for (const auto& [new_value, initializer] : spec->state_binding) {
    Value* value = graph.FindValue(initializer);
    ZG_RETURN_IF_NOT(value != nullptr && value->initializer() != nullptr, "state '", initializer,
                     "' is not an initializer of the graph");
    const Tensor& tensor = *value->initializer();
    model.buffers.push_back({initializer, tensor.dtype(),
                             std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end())});
  }
  std::sort(model.buffers.begin(), model.buffers.end(),
            [](const StateTensor& a, const StateTensor& b) { return a.name < b.name; });

  // Parameters updated whole: the optimizer slots whose parameter is an initializer.
  std::set<std::string, std::less<>> params;
  for (Node* node : graph.nodes()) {
    std::optional<OptimizerSignature> signature = FindOptimizerSignature(*node);
    if (!signature) continue;
    ZG_ASSIGN_OR_RETURN(std::vector<OptimizerSlot> slots, OptimizerSlots(*node, *signature));
    for (const OptimizerSlot& slot : slots) {
      if (slot.param->initializer() != nullptr) params.emplace(slot.param->name());
    }
  }
  for (const StateTensor& buffer : model.buffers) {
    if (model.FindBucketBuffer(buffer.name)) continue;
    StateTensor whole = buffer;
    whole.is_param = params.count(buffer.name) > 0;
    model.canonical.push_back(std::move(whole));
  }
  if (model.layout) {
    for (const LayoutManifest::Bucket& bucket : model.layout->buckets) {
      for (const LayoutManifest::Param& p : bucket.params) {
        model.canonical.push_back({p.name, bucket.dtype, p.shape, true});
        for (size_t j = 0; j < p.states.size() && j < bucket.state_dtypes.size(); ++j) {
          model.canonical.push_back({p.states[j], bucket.state_dtypes[j], p.shape, false});
        }
      }
    }
  }
  std::sort(model.canonical.begin(), model.canonical.end(),
            [](const StateTensor& a, const StateTensor& b) { return a.name < b.name; });
  return model;
}

std::string StateModel::ModelHash() const {
  std::string text;
  for (const StateTensor& t : canonical) {
    text += StrCat(t.name, " ", DtypeText(t.dtype), " ", ShapeText(t.shape), " ",
                   t.is_param ? "param" : "state", "\n");
  }
  return Fnv1a64Text(Fnv1a64(text));
}

const StateTensor* StateModel::FindBuffer(std::string_view name) const {
  for (const StateTensor& t : buffers) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const StateTensor* StateModel::FindCanonical(std::string_view name) const {
  for (const StateTensor& t : canonical) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::optional<StateModel::BucketRef> StateModel::FindBucketBuffer(std::string_view buffer) const {
  if (!layout) return std::nullopt;
  for (const LayoutManifest::Bucket& bucket : layout->buckets) {
    if (bucket.param_buffer == buffer) return BucketRef{&bucket, -1};
    for (size_t j = 0; j < bucket.state_buffers.size(); ++j) {
      if (bucket.state_buffers[j] == buffer) return BucketRef{&bucket, static_cast<int>(j)};
    }
  }
  return std::nullopt;
}

// --- manifest.json ----------------------------------------------------------------------------

std::string CheckpointManifest::ToJson() const {
  Json json;
  json["format_version"] = kFormatVersion;
  json["kind"] = CheckpointKindName(kind);
  json["step"] = step;
  json["next_step"] = next_step;
  json["nranks"] = nranks;
  json["global_batch"] = global_batch;
  json["lr_schedule"] = lr_schedule;
  json["model_hash"] = model_hash;
  json["layout_hash"] = layout ? Json(layout->Hash()) : Json(nullptr);
  json["layout"] = layout ? Json::parse(layout->ToJson()) : Json(nullptr);
  json["buffers"] = Json::array();
  for (const StateTensor& t : model.buffers) json["buffers"].push_back(TensorJson(t, false));
  json["canonical"] = Json::array();
  for (const StateTensor& t : model.canonical) json["canonical"].push_back(TensorJson(t, true));
  json["tensors"] = Json::array();
  for (const CheckpointTensor& t : tensors) {
    Json pieces = Json::array();
    for (const CheckpointPiece& p : t.pieces) {
      pieces.push_back({{"file", p.file}, {"begin", p.begin}, {"end", p.end}});
    }
    json["tensors"].push_back(
        {{"name", t.name}, {"dtype", DtypeText(t.dtype)}, {"shape", t.shape}, {"pieces", pieces}});
  }
  json["files"] = Json::array();
  for (const File& f : files) {
    char crc[16];
    std::snprintf(crc, sizeof(crc), "%08x", f.crc32);
    json["files"].push_back({{"name", f.name}, {"bytes", f.bytes}, {"crc32", crc}});
  }
  return json.dump(1);
}

StatusOr<CheckpointManifest> CheckpointManifest::FromJson(std::string_view text) {
  ZG_ASSIGN_OR_RETURN(Json json, ParseJson(text, "manifest.json"));
  ZG_RETURN_IF_NOT(json.is_object(), "manifest.json is not a JSON object");
  auto integer = [&](const char* key) -> StatusOr<int64_t> {
    ZG_RETURN_IF_NOT(json.contains(key) && IsInt64(json[key]), "manifest.json: '", key,
                     "' is missing or not an integer within int64");
    return json[key].get<int64_t>();
  };
  auto string = [&](const char* key) -> StatusOr<std::string> {
    ZG_RETURN_IF_NOT(json.contains(key) && json[key].is_string(), "manifest.json: '", key,
                     "' is missing or not a string");
    return json[key].get<std::string>();
  };
  CheckpointManifest m;
  ZG_ASSIGN_OR_RETURN(int64_t version, integer("format_version"));
  ZG_RETURN_IF_NOT(version == kFormatVersion, "manifest.json: format_version ", version,
                   " is not the one this build reads (", kFormatVersion, ")");
  ZG_ASSIGN_OR_RETURN(std::string kind, string("kind"));
  ZG_ASSIGN_OR_RETURN(m.kind, ParseCheckpointKind(kind));
  ZG_ASSIGN_OR_RETURN(m.step, integer("step"));
  ZG_ASSIGN_OR_RETURN(m.next_step, integer("next_step"));
  ZG_ASSIGN_OR_RETURN(m.nranks, integer("nranks"));
  ZG_RETURN_IF_NOT(m.nranks >= 1, "manifest.json: nranks ", m.nranks, " is not positive");
  ZG_ASSIGN_OR_RETURN(m.global_batch, integer("global_batch"));
  ZG_ASSIGN_OR_RETURN(m.lr_schedule, string("lr_schedule"));
  ZG_ASSIGN_OR_RETURN(m.model_hash, string("model_hash"));
  if (json.contains("layout") && !json["layout"].is_null()) {
    StatusOr<LayoutManifest> layout = LayoutManifest::FromJson(json["layout"].dump());
    if (!layout.ok()) return std::move(layout).status().WithContext("manifest.json: layout");
    m.layout = std::move(*layout);
    m.model.layout = m.layout;
  }
  for (const char* key : {"buffers", "canonical", "tensors", "files"}) {
    ZG_RETURN_IF_NOT(json.contains(key) && json[key].is_array(), "manifest.json: '", key,
                     "' is missing or not an array");
  }
  for (const Json& t : json["buffers"]) {
    ZG_ASSIGN_OR_RETURN(StateTensor parsed, ParseStateTensor(t, "manifest.json: buffers"));
    m.model.buffers.push_back(std::move(parsed));
  }
  for (const Json& t : json["canonical"]) {
    ZG_ASSIGN_OR_RETURN(StateTensor parsed, ParseStateTensor(t, "manifest.json: canonical"));
    m.model.canonical.push_back(std::move(parsed));
  }
  ZG_RETURN_IF_NOT(m.model.ModelHash() == m.model_hash, "manifest.json: model_hash ", m.model_hash,
                   " does not match its canonical tensors (", m.model.ModelHash(), ")");
  std::set<std::string, std::less<>> file_names;
  for (const Json& f : json["files"]) {
    ZG_RETURN_IF_NOT(f.is_object() && f.contains("name") && f["name"].is_string() &&
                         f.contains("bytes") && IsInt64(f["bytes"]) && f.contains("crc32") &&
                         f["crc32"].is_string(),
                     "manifest.json: a file entry lacks name, bytes or crc32");
    File file;
    file.name = f["name"].get<std::string>();
    ZG_RETURN_IF_NOT(file.name.find('/') == std::string::npos && file.name != ".." &&
                         file.name != "." && !file.name.empty(),
                     "manifest.json: file name '", file.name, "' is not a plain file name");
    file.bytes = f["bytes"].get<int64_t>();
    // Eight hex digits, as ToJson writes them (std::stoul would throw on anything else).
    const std::string crc = f["crc32"].get<std::string>();
    const auto [end, error] = std::from_chars(crc.data(), crc.data() + crc.size(), file.crc32, 16);
    ZG_RETURN_IF_NOT(error == std::errc() && end == crc.data() + crc.size() && crc.size() == 8,
                     "manifest.json: file '", file.name, "' has crc32 '", crc,
                     "', not 8 hex digits");
    ZG_RETURN_IF_NOT(file_names.insert(file.name).second, "manifest.json: file '", file.name,
                     "' is listed twice");
    m.files.push_back(std::move(file));
  }
  std::set<std::string, std::less<>> tensor_names;
  for (const Json& t : json["tensors"]) {
    ZG_ASSIGN_OR_RETURN(StateTensor head, ParseStateTensor(t, "manifest.json: tensors"));
    ZG_RETURN_IF_NOT(tensor_names.insert(head.name).second, "manifest.json: tensor '", head.name,
                     "' is listed twice");
    CheckpointTensor tensor{head.name, head.dtype, head.shape, {}, {}};
    ZG_RETURN_IF_NOT(t.contains("pieces") && t["pieces"].is_array(), "manifest.json: tensor '",
                     head.name, "' has no pieces");
    for (const Json& p : t["pieces"]) {
      ZG_RETURN_IF_NOT(p.is_object() && p.contains("file") && p["file"].is_string() &&
                           p.contains("begin") && IsInt64(p["begin"]) && p.contains("end") &&
                           IsInt64(p["end"]),
                       "manifest.json: tensor '", head.name, "': a piece lacks file, begin or end");
      CheckpointPiece piece{p["file"].get<std::string>(), p["begin"].get<int64_t>(),
                            p["end"].get<int64_t>()};
      ZG_RETURN_IF_NOT(file_names.count(piece.file) > 0, "manifest.json: tensor '", head.name,
                       "' is in file '", piece.file, "', which the manifest does not list");
      ZG_RETURN_IF_NOT(0 <= piece.begin && piece.begin <= piece.end && piece.end <= head.numel(),
                       "manifest.json: tensor '", head.name, "' of ", head.numel(),
                       " elements has a piece [", piece.begin, ", ", piece.end, ") out of range");
      tensor.pieces.push_back(std::move(piece));
    }
    std::sort(tensor.pieces.begin(), tensor.pieces.end(),
              [](const CheckpointPiece& a, const CheckpointPiece& b) { return a.begin < b.begin; });
    for (size_t i = 1; i < tensor.pieces.size(); ++i) {
      ZG_RETURN_IF_NOT(tensor.pieces[i - 1].end <= tensor.pieces[i].begin,
                       "manifest.json: tensor '", head.name, "' has overlapping pieces [",
                       tensor.pieces[i - 1].begin, ", ", tensor.pieces[i - 1].end, ") in '",
                       tensor.pieces[i - 1].file, "' and [", tensor.pieces[i].begin, ", ",
                       tensor.pieces[i].end, ") in '", tensor.pieces[i].file, "'");
    }
    m.tensors.push_back(std::move(tensor));
  }
  return m;
}

const CheckpointTensor* CheckpointManifest::FindTensor(std::string_view name) const {
  for (const CheckpointTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string RankFileName(int64_t rank, int64_t nranks) {
  char name[64];
  std::snprintf(name, sizeof(name), "rank-%05lld-of-%05lld.safetensors",
                static_cast<long long>(rank), static_cast<long long>(nranks));
  return name;
}

// --- plans --------------------------------------------------------------------------------------

CheckpointPlan PlanCheckpoint(CheckpointKind kind, const StateModel& model, int64_t nranks) {
  CheckpointPlan plan;
  for (int64_t r = 0; r < nranks; ++r) plan.files.push_back(RankFileName(r, nranks));
  if (kind == CheckpointKind::kUnbalanced) {
    for (const StateTensor& buffer : model.buffers) {
      CheckpointTensor tensor{buffer.name, buffer.dtype, buffer.shape, {}, {}};
      if (std::optional<StateModel::BucketRef> ref = model.FindBucketBuffer(buffer.name)) {
        const int64_t s = ref->bucket->shard_size;
        for (int64_t r = 0; r < nranks; ++r)
          tensor.pieces.push_back({plan.files[r], r * s, (r + 1) * s});
      } else {
        tensor.pieces.push_back({plan.files[0], 0, buffer.numel()});
      }
      plan.tensors.push_back(std::move(tensor));
    }
    return plan;
  }
  for (const StateTensor& c : model.canonical) {
    CheckpointTensor tensor{c.name, c.dtype, c.shape, {}, {}};
    const int64_t n = c.numel();
    for (int64_t r = 0; r < nranks; ++r) {
      const int64_t begin = r * n / nranks;
      const int64_t end = (r + 1) * n / nranks;
      if (begin < end) tensor.pieces.push_back({plan.files[r], begin, end});
    }
    plan.tensors.push_back(std::move(tensor));
  }
  return plan;
}

CheckpointPlan PlanConsolidated(const StateModel& model, bool with_states, int64_t max_file_bytes,
                                bool master_weights) {
  // Parameter name -> its master copy's canonical name.
  std::map<std::string_view, std::string_view> masters;
  if (master_weights && model.layout) {
    for (const LayoutManifest::Bucket& bucket : model.layout->buckets) {
      if (bucket.master_state < 0) continue;
      for (const LayoutManifest::Param& p : bucket.params) {
        masters.emplace(p.name, p.states[static_cast<size_t>(bucket.master_state)]);
      }
    }
  }
  auto master_of = [&masters](const StateTensor& c) -> std::string_view {
    auto it = c.is_param ? masters.find(c.name) : masters.end();
    return it != masters.end() ? it->second : std::string_view();
  };
  CheckpointPlan plan;
  std::vector<std::vector<const StateTensor*>> groups(1);
  int64_t in_group = 0;
  for (const StateTensor& c : model.canonical) {
    if (!c.is_param && !with_states) continue;
    const DataType dtype = master_of(c).empty() ? c.dtype : DataType::kFloat32;
    const int64_t bytes = c.numel() * static_cast<int64_t>(ElementSize(dtype));
    if (max_file_bytes > 0 && in_group > 0 && in_group + bytes > max_file_bytes) {
      groups.emplace_back();
      in_group = 0;
    }
    groups.back().push_back(&c);
    in_group += bytes;
  }
  const size_t k = groups.size();
  for (size_t i = 0; i < k; ++i) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors", i + 1, k);
    plan.files.push_back(k == 1 ? "model.safetensors" : name);
    for (const StateTensor* c : groups[i]) {
      const std::string_view master = master_of(*c);
      plan.tensors.push_back({c->name,
                              master.empty() ? c->dtype : DataType::kFloat32,
                              c->shape,
                              {{plan.files[i], 0, c->numel()}},
                              std::string(master)});
    }
  }
  return plan;
}

// --- writing ------------------------------------------------------------------------------------

StatusOr<CheckpointManifest::File> WriteCheckpointFile(const std::string& dir,
                                                       const CheckpointPlan& plan,
                                                       size_t file_index, const PieceSource& source,
                                                       size_t chunk_bytes) {
  const std::string& file_name = plan.files[file_index];
  struct Entry {
    const CheckpointTensor* tensor;
    const CheckpointPiece* piece;
  };
  std::vector<Entry> entries;
  for (const CheckpointTensor& t : plan.tensors) {
    for (const CheckpointPiece& p : t.pieces) {
      if (p.file == file_name) entries.push_back({&t, &p});
    }
  }
  // As the reference writer: larger elements first, then by name, so every tensor is aligned.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const size_t ea = ElementSize(a.tensor->dtype), eb = ElementSize(b.tensor->dtype);
    if (ea != eb) return ea > eb;
    return a.tensor->name < b.tensor->name;
  });
  Json header;
  header["__metadata__"] = {{"format", "pt"}};
  int64_t offset = 0;
  for (const Entry& e : entries) {
    const int64_t n = e.piece->end - e.piece->begin;
    const int64_t bytes = n * static_cast<int64_t>(ElementSize(e.tensor->dtype));
    // A piece covering the whole tensor keeps its shape; a part of one is 1-D.
    Json shape = n == e.tensor->numel() ? Json(e.tensor->shape) : Json::array({n});
    header[e.tensor->name] = {{"dtype", DtypeText(e.tensor->dtype)},
                              {"shape", shape},
                              {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - (text.size() % 8)) % 8, ' ');
  const uint64_t header_len = text.size();
  std::byte len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<std::byte>((header_len >> (8 * i)) & 0xff);

  const std::string path = StrCat(dir, "/", file_name);
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path));
  uint32_t crc = Crc32(0, len_bytes);
  crc = Crc32(crc, std::as_bytes(std::span(text)));
  ZG_RETURN_IF_ERROR(file->Append(len_bytes));
  ZG_RETURN_IF_ERROR(file->Append(text));
  std::vector<std::byte> chunk;
  StreamPosition stream{static_cast<off_t>(8 + header_len)};
  for (const Entry& e : entries) {
    const size_t element = ElementSize(e.tensor->dtype);
    const int64_t per_chunk = std::max<int64_t>(1, static_cast<int64_t>(chunk_bytes / element));
    for (int64_t at = e.piece->begin; at < e.piece->end; at += per_chunk) {
      const int64_t end = std::min(e.piece->end, at + per_chunk);
      chunk.resize(static_cast<size_t>(end - at) * element);
      ZG_RETURN_IF_ERROR(
          source(*e.tensor, at, end, chunk)
              .WithContext(StrCat("writing '", e.tensor->name, "' to '", path, "'")));
      crc = Crc32(crc, chunk);
      ZG_RETURN_IF_ERROR(file->Append(chunk));
      WriteBehind(file->fd(), static_cast<off_t>(chunk.size()), stream);
    }
  }
  ZG_RETURN_IF_ERROR(file->Commit());
  return CheckpointManifest::File{file_name, static_cast<int64_t>(8 + header_len + offset), crc};
}

// --- reading ------------------------------------------------------------------------------------

// A file of the checkpoint: its header (validated, mapped) and its bytes, read through a
// checksum.
struct CheckpointReader::OpenedFile {
  std::unique_ptr<SafetensorsFile> layout;
  std::unique_ptr<ChecksummedFile> data;
  bool verified = false;
};

CheckpointReader::~CheckpointReader() = default;

StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(const std::string& dir,
                                                                   ChecksumTiming timing) {
  const std::string path = StrCat(dir, "/manifest.json");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgumentError(
        StrCat("'", dir,
               "' has no manifest.json: it is not a committed checkpoint (a save that is "
               "still being written or was interrupted, or not a checkpoint at all)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<CheckpointManifest> manifest = CheckpointManifest::FromJson(text.str());
  if (!manifest.ok())
    return std::move(manifest).status().WithContext(StrCat("checkpoint '", dir, "'"));
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader());
  reader->dir_ = dir;
  reader->timing_ = timing;
  reader->manifest_ = std::move(*manifest);
  return reader;
}

StatusOr<CheckpointReader::OpenedFile*> CheckpointReader::File(const std::string& name) {
  auto it = files_.find(name);
  if (it != files_.end()) return it->second.get();
  const CheckpointManifest::File* entry = FindFileEntry(manifest_, name);
  ZG_RET_CHECK(entry != nullptr, "file '", name, "' is not in the manifest");
  const std::string path = StrCat(dir_, "/", name);
  StatusOr<std::unique_ptr<SafetensorsFile>> layout = SafetensorsFile::Open(path);
  if (!layout.ok()) {
    Status status = std::move(layout).status();
    if (status.code() == StatusCode::kNotFound) {
      return DataLossError(
          StrCat("checkpoint '", dir_, "': file '", name, "' is missing (the manifest lists it)"));
    }
    return std::move(status).WithContext(StrCat("checkpoint '", dir_, "'"));
  }
  const size_t bytes = (*layout)->mapping()->bytes().size();
  if (static_cast<int64_t>(bytes) != entry->bytes) {
    return DataLossError(StrCat("checkpoint '", dir_, "': file '", name, "' has ", bytes,
                                " bytes, the manifest says ", entry->bytes));
  }
  // Checked while reading, each byte is read once; checked before, the bytes are read again.
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<ChecksummedFile> data,
                      ChecksummedFile::Open(path, timing_ == ChecksumTiming::kWhileReading
                                                      ? ChecksummedFile::Reads::kOnce
                                                      : ChecksummedFile::Reads::kAny));
  auto opened = std::make_unique<OpenedFile>(OpenedFile{std::move(*layout), std::move(data)});
  if (timing_ == ChecksumTiming::kBeforeReading) {
    ZG_RETURN_IF_ERROR(VerifyChecksum(name, *opened));
  }
  return files_.emplace(name, std::move(opened)).first->second.get();
}

Status CheckpointReader::VerifyChecksum(const std::string& name, OpenedFile& file) {
  if (file.verified) return Status::Ok();
  const CheckpointManifest::File* entry = FindFileEntry(manifest_, name);
  ZG_RET_CHECK(entry != nullptr, "file '", name, "' is not in the manifest");
  ZG_ASSIGN_OR_RETURN(uint32_t crc, file.data->Checksum());
  if (crc != entry->crc32) {
    char text[64];
    std::snprintf(text, sizeof(text), "%08x, the manifest says %08x", crc, entry->crc32);
    return DataLossError(StrCat("checkpoint '", dir_, "': file '", name,
                                "' fails its checksum (CRC-32 ", text, "): it is corrupt"));
  }
  file.verified = true;
  return Status::Ok();
}

Status CheckpointReader::VerifyAll() {
  for (const CheckpointManifest::File& f : manifest_.files) {
    ZG_ASSIGN_OR_RETURN(OpenedFile * file, File(f.name));
    ZG_RETURN_IF_ERROR(VerifyChecksum(f.name, *file));
  }
  return Status::Ok();
}

Status CheckpointReader::LocateStored(const CheckpointTensor& tensor, int64_t begin, int64_t end,
                                      int64_t out_offset, std::vector<SourceRange>& ranges) const {
  const int64_t element = static_cast<int64_t>(ElementSize(tensor.dtype));
  int64_t covered = 0;
  for (const CheckpointPiece& piece : tensor.pieces) {
    const int64_t lo = std::max(begin, piece.begin), hi = std::min(end, piece.end);
    if (lo >= hi) continue;
    ranges.push_back({&tensor, &piece, (lo - piece.begin) * element, (hi - piece.begin) * element,
                      out_offset + (lo - begin) * element});
    covered += hi - lo;
  }
  if (covered != end - begin) {
    return DataLossError(StrCat("checkpoint '", dir_, "': tensor '", tensor.name, "' elements [",
                                begin, ", ", end, ") are not all in its files"));
  }
  return Status::Ok();
}

Status CheckpointReader::LocateCanonical(std::string_view name, int64_t begin, int64_t end,
                                         int64_t out_bytes, int64_t out_offset,
                                         std::vector<SourceRange>& ranges) const {
  auto check_dtype = [&](const CheckpointTensor& stored) -> Status {
    ZG_RETURN_IF_NOT(out_bytes == (end - begin) * static_cast<int64_t>(ElementSize(stored.dtype)),
                     "checkpoint tensor '", name, "' is ", DtypeText(stored.dtype),
                     ", the graph's has another dtype");
    return Status::Ok();
  };
  if (const CheckpointTensor* stored = manifest_.FindTensor(name)) {
    ZG_RETURN_IF_ERROR(check_dtype(*stored));
    return LocateStored(*stored, begin, end, out_offset, ranges);
  }
  if (manifest_.layout) {
    for (const LayoutManifest::Bucket& bucket : manifest_.layout->buckets) {
      for (const LayoutManifest::Param& p : bucket.params) {
        std::string_view buffer;
        if (p.name == name) buffer = bucket.param_buffer;
        for (size_t j = 0; j < p.states.size() && j < bucket.state_buffers.size(); ++j) {
          if (p.states[j] == name) buffer = bucket.state_buffers[j];
        }
        if (buffer.empty()) continue;
        const CheckpointTensor* stored = manifest_.FindTensor(buffer);
        if (stored == nullptr) break;
        ZG_RETURN_IF_NOT(end <= p.numel, "tensor '", name, "' has ", p.numel, " elements");
        ZG_RETURN_IF_ERROR(check_dtype(*stored));
        return LocateStored(*stored, p.offset + begin, p.offset + end, out_offset, ranges);
      }
    }
  }
  return NotFoundError(StrCat("checkpoint '", dir_, "' has no tensor '", name, "' (a ",
                              CheckpointKindName(manifest_.kind), " checkpoint)"));
}

StatusOr<std::vector<CheckpointReader::SourceRange>> CheckpointReader::LocateCanonical(
    std::string_view name, int64_t begin, int64_t end, int64_t out_bytes) const {
  std::vector<SourceRange> ranges;
  ZG_RETURN_IF_ERROR(LocateCanonical(name, begin, end, out_bytes, 0, ranges));
  return ranges;
}

StatusOr<std::vector<CheckpointReader::SourceRange>> CheckpointReader::LocateBuffer(
    const StateModel& target, std::string_view buffer, int64_t begin, int64_t end,
    int64_t out_bytes) const {
  std::vector<SourceRange> ranges;
  std::optional<StateModel::BucketRef> ref = target.FindBucketBuffer(buffer);
  if (!ref) {
    ZG_RETURN_IF_ERROR(LocateCanonical(buffer, begin, end, out_bytes, 0, ranges));
    return ranges;
  }
  const CheckpointTensor* same = manifest_.FindTensor(buffer);
  if (same != nullptr && manifest_.layout && target.layout &&
      manifest_.layout->Hash() == target.layout->Hash()) {
    ZG_RETURN_IF_ERROR(LocateStored(*same, begin, end, 0, ranges));
    return ranges;
  }
  // Parameter by parameter; the padding between them has no source and reads as zeros.
  const LayoutManifest::Bucket& bucket = *ref->bucket;
  const DataType dtype = ref->state < 0 ? bucket.dtype : bucket.state_dtypes[ref->state];
  const int64_t element = static_cast<int64_t>(ElementSize(dtype));
  ZG_RET_CHECK(out_bytes == (end - begin) * element);
  for (const LayoutManifest::Param& p : bucket.params) {
    const int64_t lo = std::max(begin, p.offset), hi = std::min(end, p.offset + p.numel);
    if (lo >= hi) continue;
    const std::string& name = ref->state < 0 ? p.name : p.states[ref->state];
    ZG_RETURN_IF_ERROR(LocateCanonical(name, lo - p.offset, hi - p.offset, (hi - lo) * element,
                                       (lo - begin) * element, ranges));
  }
  return ranges;
}

Status CheckpointReader::Copy(std::span<const SourceRange> ranges, std::span<std::byte> out) {
  int64_t filled = 0;  // bytes of `out` before this are written; ranges come in output order
  for (const SourceRange& range : ranges) {
    const CheckpointTensor& tensor = *range.tensor;
    const CheckpointPiece& piece = *range.piece;
    ZG_ASSIGN_OR_RETURN(OpenedFile * file, File(piece.file));
    const SafetensorsFile::TensorInfo* info = file->layout->Find(tensor.name);
    if (info == nullptr || info->dtype != tensor.dtype ||
        static_cast<int64_t>(info->bytes.size()) !=
            (piece.end - piece.begin) * static_cast<int64_t>(ElementSize(tensor.dtype))) {
      return DataLossError(StrCat("checkpoint '", dir_, "': file '", piece.file,
                                  "' does not hold tensor '", tensor.name, "' elements [",
                                  piece.begin, ", ", piece.end, ") as ", DtypeText(tensor.dtype),
                                  ", as the manifest says"));
    }
    ZG_RET_CHECK(filled <= range.out_offset &&
                 range.out_offset + range.end - range.begin <= static_cast<int64_t>(out.size()));
    std::memset(out.data() + filled, 0, static_cast<size_t>(range.out_offset - filled));
    ZG_RETURN_IF_ERROR(
        file->data->ReadAt(FileOffset(*file->layout, *info) + range.begin,
                           out.subspan(static_cast<size_t>(range.out_offset),
                                       static_cast<size_t>(range.end - range.begin))));
    filled = range.out_offset + range.end - range.begin;
  }
  std::memset(out.data() + filled, 0, out.size() - static_cast<size_t>(filled));
  return Status::Ok();
}

Status CheckpointReader::ReadCanonical(std::string_view name, int64_t begin, int64_t end,
                                       std::span<std::byte> out) {
  ZG_ASSIGN_OR_RETURN(std::vector<SourceRange> ranges,
                      LocateCanonical(name, begin, end, static_cast<int64_t>(out.size())));
  return Copy(ranges, out);
}

Status CheckpointReader::ReadBuffer(const StateModel& target, std::string_view buffer,
                                    int64_t begin, int64_t end, std::span<std::byte> out) {
  ZG_ASSIGN_OR_RETURN(std::vector<SourceRange> ranges,
                      LocateBuffer(target, buffer, begin, end, static_cast<int64_t>(out.size())));
  return Copy(ranges, out);
}

StatusOr<std::string> ResolveCheckpointDir(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(path) / "manifest.json")) return path;
  std::ifstream latest(fs::path(path) / "latest");
  if (latest) {
    std::string name;
    latest >> name;
    ZG_RETURN_IF_NOT(!name.empty() && name.find('/') == std::string::npos, "'", path,
                     "/latest' does not name a checkpoint folder");
    return StrCat(path, "/", name);
  }
  return InvalidArgumentError(
      StrCat("'", path,
             "' has no manifest.json: it is not a committed checkpoint (a save that is still "
             "being written or was interrupted), nor a --save folder with a 'latest' file"));
}

}  // namespace zerograph
