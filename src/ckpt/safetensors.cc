#include "zerograph/ckpt/safetensors.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "zerograph/core/atomic_file.h"
#include "zerograph/core/json.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

// ordered_json keeps the header's key order: `__metadata__` first, tensors in data order.
using Json = nlohmann::ordered_json;

// The reference reader's bound (safetensors MAX_HEADER_SIZE): larger headers are refused before
// anything is parsed.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";

struct DtypeName {
  DataType dtype;
  std::string_view name;
};
constexpr DtypeName kDtypeNames[] = {
    {DataType::kBool, "BOOL"},     {DataType::kUint8, "U8"},   {DataType::kInt8, "I8"},
    {DataType::kUint16, "U16"},    {DataType::kInt16, "I16"},  {DataType::kFloat16, "F16"},
    {DataType::kBFloat16, "BF16"}, {DataType::kUint32, "U32"}, {DataType::kInt32, "I32"},
    {DataType::kFloat32, "F32"},   {DataType::kUint64, "U64"}, {DataType::kInt64, "I64"},
    {DataType::kFloat64, "F64"},
};

// Bytes of a tensor of `shape` and `dtype`, or nullopt on a negative dimension or overflow.
std::optional<int64_t> ByteSize(std::span<const int64_t> shape, DataType dtype) {
  int64_t bytes = static_cast<int64_t>(ElementSize(dtype));
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes)) return std::nullopt;
  }
  return bytes;
}

std::string ShapeText(std::span<const int64_t> shape) {
  return StrCat("[", StrJoin(shape, ","), "]");
}

// Writes `pieces`, in order, to `path` through an AtomicFile.
Status WriteFileAtomically(const std::string& path,
                           std::span<const std::span<const std::byte>> pieces) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path));
  for (std::span<const std::byte> piece : pieces) ZG_RETURN_IF_ERROR(file->Append(piece));
  return file->Commit();
}

// Parses the header, refusing duplicate keys: the reference reader would keep only one of them,
// and which one differs between parsers.
StatusOr<Json> ParseHeader(std::string_view text) {
  ZG_ASSIGN_OR_RETURN(Json json, ParseJson(text, "header"));
  ZG_RETURN_IF_NOT(json.is_object(), "header is not a JSON object");
  return json;
}

// A non-negative integer that fits int64 (JSON numbers may be floats, negative or huge).
std::optional<int64_t> NonNegativeInt(const Json& json) {
  if (json.is_number_unsigned()) {
    uint64_t value = json.get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(value);
  }
  if (json.is_number_integer()) {
    int64_t value = json.get<int64_t>();
    if (value >= 0) return value;
  }
  return std::nullopt;
}

StatusOr<SafetensorsFile::TensorInfo> ParseTensorInfo(const std::string& name, const Json& json) {
  const std::string where = StrCat("tensor '", name, "': ");
  ZG_RETURN_IF_NOT(json.is_object(), where, "entry is not a JSON object");
  SafetensorsFile::TensorInfo info;
  info.name = name;

  auto dtype = json.find("dtype");
  ZG_RETURN_IF_NOT(dtype != json.end() && dtype->is_string(), where, "missing string 'dtype'");
  std::optional<DataType> type = DataTypeFromSafetensors(dtype->get_ref<const std::string&>());
  ZG_RETURN_IF_NOT(type.has_value(), where, "unsupported dtype '",
                   dtype->get_ref<const std::string&>(), "'");
  info.dtype = *type;

  auto shape = json.find("shape");
  ZG_RETURN_IF_NOT(shape != json.end() && shape->is_array(), where, "missing array 'shape'");
  for (const Json& dim : *shape) {
    std::optional<int64_t> value = NonNegativeInt(dim);
    ZG_RETURN_IF_NOT(value.has_value(), where, "shape has a bad dimension ", dim.dump());
    info.shape.push_back(*value);
  }

  auto offsets = json.find("data_offsets");
  ZG_RETURN_IF_NOT(offsets != json.end() && offsets->is_array() && offsets->size() == 2, where,
                   "missing 'data_offsets' [begin, end]");
  std::optional<int64_t> begin = NonNegativeInt((*offsets)[0]);
  std::optional<int64_t> end = NonNegativeInt((*offsets)[1]);
  ZG_RETURN_IF_NOT(begin && end, where, "bad data_offsets ", offsets->dump());
  info.begin = *begin;
  info.end = *end;
  return info;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> ParseMetadata(const Json& json) {
  ZG_RETURN_IF_NOT(json.is_object(), "'", kMetadataKey, "' is not a JSON object");
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const auto& [key, value] : json.items()) {
    ZG_RETURN_IF_NOT(value.is_string(), "'", kMetadataKey, "' entry '", key, "' is not a string");
    metadata.emplace_back(key, value.get<std::string>());
  }
  return metadata;
}

Status CheckWriteEntries(std::span<const SafetensorsWriteEntry> tensors,
                         std::span<const std::pair<std::string, std::string>> metadata) {
  std::unordered_set<std::string_view> names;
  for (const SafetensorsWriteEntry& entry : tensors) {
    ZG_RETURN_IF_NOT(!entry.name.empty() && entry.name != kMetadataKey, "bad tensor name '",
                     entry.name, "'");
    ZG_RETURN_IF_NOT(names.insert(entry.name).second, "tensor '", entry.name, "' given twice");
    ZG_RETURN_IF_NOT(SafetensorsDtypeName(entry.dtype).has_value(), "tensor '", entry.name,
                     "': safetensors has no dtype for ", DataTypeName(entry.dtype));
    std::optional<int64_t> bytes = ByteSize(entry.shape, entry.dtype);
    ZG_RETURN_IF_NOT(bytes.has_value(), "tensor '", entry.name, "': bad shape ",
                     ShapeText(entry.shape));
    ZG_RETURN_IF_NOT(*bytes == static_cast<int64_t>(entry.bytes.size()), "tensor '", entry.name,
                     "': ", entry.bytes.size(), " bytes given for ", DataTypeName(entry.dtype),
                     ShapeText(entry.shape), " (", *bytes, " bytes)");
  }
  std::unordered_set<std::string_view> keys;
  for (const auto& [key, value] : metadata) {
    ZG_RETURN_IF_NOT(keys.insert(key).second, "metadata key '", key, "' given twice");
  }
  return Status::Ok();
}

StatusOr<std::string> BuildHeader(std::span<const SafetensorsWriteEntry> tensors,
                                  std::span<const size_t> order,
                                  std::span<const std::pair<std::string, std::string>> metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json& entries = header[std::string(kMetadataKey)] = Json::object();
    for (const auto& [key, value] : metadata) entries[key] = value;
  }
  int64_t offset = 0;
  for (size_t index : order) {
    const SafetensorsWriteEntry& entry = tensors[index];
    const auto size = static_cast<int64_t>(entry.bytes.size());
    header[entry.name] = Json{{"dtype", std::string(*SafetensorsDtypeName(entry.dtype))},
                              {"shape", entry.shape},
                              {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception& e) {
    // The only failure left is a name or metadata string that is not UTF-8.
    return InvalidArgumentError(StrCat("header is not valid UTF-8: ", e.what()));
  }
  // Pad so that the data area, at 8 + header length, starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

std::optional<std::string_view> SafetensorsDtypeName(DataType dtype) {
  for (const DtypeName& entry : kDtypeNames) {
    if (entry.dtype == dtype) return entry.name;
  }
  return std::nullopt;
}

std::optional<DataType> DataTypeFromSafetensors(std::string_view name) {
  for (const DtypeName& entry : kDtypeNames) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

Status WriteSafetensors(const std::string& path, std::span<const SafetensorsWriteEntry> tensors,
                        std::span<const std::pair<std::string, std::string>> metadata) {
  const std::string context = StrCat("writing safetensors '", path, "'");
  ZG_RETURN_IF_ERROR(CheckWriteEntries(tensors, metadata).WithContext(context));

  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    size_t size_a = ElementSize(tensors[a].dtype), size_b = ElementSize(tensors[b].dtype);
    if (size_a != size_b) return size_a > size_b;
    return tensors[a].name < tensors[b].name;
  });

  StatusOr<std::string> header = BuildHeader(tensors, order, metadata);
  if (!header.ok()) return header.status().WithContext(context);
  std::byte length[8];
  for (int i = 0; i < 8; ++i) length[i] = std::byte((header->size() >> (8 * i)) & 0xff);

  std::vector<std::span<const std::byte>> pieces = {length, std::as_bytes(std::span(*header))};
  for (size_t index : order) pieces.push_back(tensors[index].bytes);
  return WriteFileAtomically(path, pieces);
}

StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  const std::string context = StrCat("reading safetensors '", path, "'");
  StatusOr<std::shared_ptr<const MappedFile>> mapping = MappedFile::Open(path);
  if (!mapping.ok()) return mapping.status().WithContext(context);
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->mapping_ = std::move(mapping).value();
  std::span<const std::byte> bytes = file->mapping_->bytes();

  auto fail = [&](Status status) { return std::move(status).WithContext(context); };
  if (bytes.size() < 8) {
    return fail(DataLossError(StrCat("file has ", bytes.size(), " bytes, too few for a header")));
  }
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= std::to_integer<uint64_t>(bytes[i]) << (8 * i);
  if (header_size > kMaxHeaderBytes) {
    return fail(DataLossError(
        StrCat("not a safetensors file: its first 8 bytes give a header "
               "length of ",
               header_size, ", which exceeds the limit of ", kMaxHeaderBytes, " bytes")));
  }
  if (header_size > bytes.size() - 8) {
    return fail(
        DataLossError(StrCat("not a safetensors file (or a truncated one): its header "
                             "length ",
                             header_size, " exceeds the file (", bytes.size(), " bytes)")));
  }
  std::string_view header_text(reinterpret_cast<const char*>(bytes.data() + 8), header_size);
  StatusOr<Json> header = ParseHeader(header_text);
  if (!header.ok()) return fail(header.status());

  for (const auto& [key, value] : header->items()) {
    if (key == kMetadataKey) {
      StatusOr<std::vector<std::pair<std::string, std::string>>> metadata = ParseMetadata(value);
      if (!metadata.ok()) return fail(metadata.status());
      file->metadata_ = std::move(metadata).value();
      continue;
    }
    StatusOr<TensorInfo> info = ParseTensorInfo(key, value);
    if (!info.ok()) return fail(info.status());
    file->tensors_.push_back(std::move(info).value());
  }

  std::sort(file->tensors_.begin(), file->tensors_.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  const std::span<const std::byte> data = bytes.subspan(8 + header_size);
  int64_t expected_begin = 0;
  for (TensorInfo& info : file->tensors_) {
    const std::string where = StrCat("tensor '", info.name, "': ");
    if (info.begin != expected_begin) {
      return fail(
          DataLossError(StrCat(where, "data_offsets [", info.begin, ",", info.end, "] ",
                               info.begin < expected_begin ? "overlap" : "leave a gap after",
                               " the previous tensor (ending at ", expected_begin, ")")));
    }
    if (info.end < info.begin) {
      return fail(DataLossError(
          StrCat(where, "data_offsets [", info.begin, ",", info.end, "] end before they begin")));
    }
    std::optional<int64_t> size = ByteSize(info.shape, info.dtype);
    if (!size) {
      return fail(DataLossError(StrCat(where, "shape ", ShapeText(info.shape), " overflows")));
    }
    if (*size != info.end - info.begin) {
      return fail(DataLossError(StrCat(where, DataTypeName(info.dtype), ShapeText(info.shape),
                                       " needs ", *size, " bytes, data_offsets [", info.begin, ",",
                                       info.end, "] hold ", info.end - info.begin)));
    }
    if (info.end > static_cast<int64_t>(data.size())) {
      return fail(DataLossError(StrCat(where, "data_offsets [", info.begin, ",", info.end,
                                       "] run past the data area (", data.size(),
                                       " bytes): the file is truncated")));
    }
    info.bytes = data.subspan(static_cast<size_t>(info.begin), static_cast<size_t>(*size));
    expected_begin = info.end;
  }
  if (expected_begin != static_cast<int64_t>(data.size())) {
    return fail(DataLossError(StrCat("data area has ", data.size(), " bytes but the tensors use ",
                                     expected_begin, " (trailing bytes)")));
  }
  for (size_t i = 0; i < file->tensors_.size(); ++i)
    file->index_.emplace(file->tensors_[i].name, i);
  return file;
}

const SafetensorsFile::TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<std::string_view> SafetensorsFile::FindMetadata(std::string_view key) const {
  for (const auto& [entry_key, value] : metadata_) {
    if (entry_key == key) return std::string_view(value);
  }
  return std::nullopt;
}

}  // namespace zerograph
