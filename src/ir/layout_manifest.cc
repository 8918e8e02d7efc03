#include "zerograph/ir/layout_manifest.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerograph/core/hash.h"
#include "zerograph/core/json.h"
#include "zerograph/core/num_elements.h"

namespace zerograph {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kAlignmentBytes = 256;
// Element counts a manifest may hold: with at most kMaxRanks ranks, padding one stays within
// int64.
constexpr int64_t kMaxElements = int64_t{1} << 62;

// Writes the canonical JSON text (what nlohmann's dump() makes of the manifest as an ordered
// object: keys in the order below, no whitespace) directly. Building the JSON value first costs
// microseconds per parameter, and a rewritten large graph has hundreds of thousands of them.
class CanonicalWriter {
 public:
  std::string& text() { return text_; }

  // `key` is one of the manifest's own keys, plain ASCII: written without AppendJsonString's check.
  void Key(std::string_view key) {
    Separate();
    text_ += '"';
    text_ += key;
    text_ += "\":";
    first_ = true;  // the value follows without a comma
  }
  void Reserve(size_t bytes) { text_.reserve(bytes); }
  void Int(int64_t value) {
    Separate();
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value);
    text_.append(digits, end);
  }
  void String(std::string_view value) {
    Separate();
    AppendJsonString(value, text_);
  }
  void Open(char bracket) {
    Separate();
    text_ += bracket;
    first_ = true;
  }
  void Close(char bracket) {
    text_ += bracket;
    first_ = false;
  }
  template <typename T, typename Write>
  void Array(const std::vector<T>& items, Write write) {
    Open('[');
    for (const T& item : items) write(item);
    Close(']');
  }

 private:
  // A comma before every value but the first of an object or array, and the one after a key.
  void Separate() {
    if (!first_) text_ += ',';
    first_ = false;
  }

  std::string text_;
  bool first_ = true;
};

// The canonical JSON without the hash, and the writer positioned to append the hash field.
void WriteBody(const LayoutManifest& manifest, CanonicalWriter& w) {
  // A large manifest is tens of megabytes: sized once instead of grown by copies. About 100 bytes
  // of keys and numbers per parameter besides its names.
  size_t estimate = 256;
  for (const LayoutManifest::Bucket& bucket : manifest.buckets) {
    for (const LayoutManifest::Param& param : bucket.params) {
      estimate += 128 + param.name.size();
      for (const std::string& state : param.states) estimate += 3 + state.size();
    }
  }
  w.Reserve(estimate);
  w.Open('{');
  w.Key("format_version");
  w.Int(1);
  w.Key("nranks");
  w.Int(manifest.nranks);
  if (manifest.align != LayoutManifest::Alignment::kSeed) {
    w.Key("align");
    w.String(AlignmentName(manifest.align));
  }
  w.Key("buckets");
  w.Array(manifest.buckets, [&](const LayoutManifest::Bucket& bucket) {
    w.Open('{');
    w.Key("id");
    w.Int(bucket.id);
    w.Key("dtype");
    w.String(DataTypeName(bucket.dtype));
    w.Key("total");
    w.Int(bucket.total);
    w.Key("shard_size");
    w.Int(bucket.shard_size);
    w.Key("optimizer");
    w.String(bucket.optimizer);
    w.Key("param_buffer");
    w.String(bucket.param_buffer);
    w.Key("state_buffers");
    w.Array(bucket.state_buffers, [&](const std::string& name) { w.String(name); });
    w.Key("state_dtypes");
    w.Array(bucket.state_dtypes, [&](DataType dtype) { w.String(DataTypeName(dtype)); });
    if (bucket.master_state >= 0) {
      w.Key("master_state");
      w.Int(bucket.master_state);
    }
    w.Key("params");
    w.Array(bucket.params, [&](const LayoutManifest::Param& param) {
      w.Open('{');
      w.Key("name");
      w.String(param.name);
      w.Key("shape");
      w.Array(param.shape, [&](int64_t dim) { w.Int(dim); });
      w.Key("offset");
      w.Int(param.offset);
      w.Key("numel");
      w.Int(param.numel);
      w.Key("padded");
      w.Int(param.padded);
      w.Key("states");
      w.Array(param.states, [&](const std::string& name) { w.String(name); });
      w.Close('}');
    });
    w.Close('}');
  });
  w.Key("whole");
  w.Array(manifest.whole, [&](const LayoutManifest::WholeParam& param) {
    w.Open('{');
    w.Key("name");
    w.String(param.name);
    w.Key("reason");
    w.String(param.reason);
    w.Close('}');
  });
}

StatusOr<DataType> ParseDtype(const Json& value, std::string_view where) {
  ZG_RETURN_IF_NOT(value.is_string(), where, ": dtype must be a string");
  const std::string name = value.get<std::string>();
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                         DataType::kFloat64, DataType::kInt64, DataType::kInt32}) {
    if (DataTypeName(dtype) == name) return dtype;
  }
  return InvalidArgumentError(StrCat(where, ": unknown dtype '", name, "'"));
}

// Reads a typed field, reporting the path of a missing or mistyped one. Integers are taken only
// from JSON integers that fit (IsInt64), never converted from floats.
template <typename T>
Status Field(const Json& object, const char* key, std::string_view where, T& out) {
  auto it = object.find(key);
  ZG_RETURN_IF_NOT(it != object.end(), where, ": missing '", key, "'");
  bool integers_fit = true;
  if constexpr (std::is_same_v<T, int64_t>) {
    integers_fit = IsInt64(*it);
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    integers_fit = !it->is_array() || std::all_of(it->begin(), it->end(), IsInt64);
  }
  ZG_RETURN_IF_NOT(integers_fit, where, ": '", key, "' must be an integer (a list of them) ",
                   "within int64");
  try {
    out = it->template get<T>();
  } catch (const Json::exception&) {
    return InvalidArgumentError(StrCat(where, ": '", key, "' has the wrong type"));
  }
  return Status::Ok();
}

}  // namespace

int64_t PaddingGranularity(DataType dtype, int64_t nranks) {
  if (dtype != DataType::kFloat32 && dtype != DataType::kFloat16 && dtype != DataType::kBFloat16) {
    return 0;
  }
  const int64_t e = static_cast<int64_t>(ElementSize(dtype));
  return kAlignmentBytes * nranks / (e * e);
}

int64_t PaddedNumel(int64_t numel, DataType dtype, int64_t nranks) {
  const int64_t g = PaddingGranularity(dtype, nranks);
  if (g == 0) return numel;
  return (numel + g - 1) / g * g;
}

std::string_view AlignmentName(LayoutManifest::Alignment align) {
  return align == LayoutManifest::Alignment::kCompact ? "compact" : "seed";
}

std::optional<LayoutManifest::Alignment> AlignmentFromName(std::string_view name) {
  if (name == "seed") return LayoutManifest::Alignment::kSeed;
  if (name == "compact") return LayoutManifest::Alignment::kCompact;
  return std::nullopt;
}

std::string LayoutManifest::Hash() const {
  CanonicalWriter writer;
  WriteBody(*this, writer);
  writer.text() += '}';
  return Fnv1a64Text(Fnv1a64(writer.text()));
}

std::string LayoutManifest::ToJson() const {
  CanonicalWriter writer;
  WriteBody(*this, writer);
  // The hash of the text without it: the body and the closing brace.
  const std::string hash = Fnv1a64Text(Fnv1a64("}", Fnv1a64(writer.text())));
  writer.Key("hash");
  writer.String(hash);
  writer.Close('}');
  return std::move(writer.text());
}

StatusOr<LayoutManifest> LayoutManifest::FromJson(std::string_view json) {
  ZG_ASSIGN_OR_RETURN(Json root, ParseJson(json, "layout manifest"));
  ZG_RETURN_IF_NOT(root.is_object(), "layout manifest is not a JSON object");
  int64_t version = 0;
  ZG_RETURN_IF_ERROR(Field(root, "format_version", "layout manifest", version));
  ZG_RETURN_IF_NOT(version == 1, "layout manifest has format_version ", version,
                   "; this build reads 1");
  LayoutManifest manifest;
  ZG_RETURN_IF_ERROR(Field(root, "nranks", "layout manifest", manifest.nranks));
  ZG_RETURN_IF_NOT(manifest.nranks >= 1 && manifest.nranks <= kMaxRanks,
                   "layout manifest: nranks must be from 1 to ", kMaxRanks, ", got ",
                   manifest.nranks);
  if (auto align = root.find("align"); align != root.end()) {
    std::optional<Alignment> parsed;
    if (align->is_string()) parsed = AlignmentFromName(align->get_ref<const std::string&>());
    ZG_RETURN_IF_NOT(parsed.has_value(),
                     "layout manifest: 'align' must be \"seed\" or \"compact\"");
    manifest.align = *parsed;
  }
  auto buckets = root.find("buckets");
  ZG_RETURN_IF_NOT(buckets != root.end() && buckets->is_array(),
                   "layout manifest: missing 'buckets'");
  for (const Json& b : *buckets) {
    Bucket bucket;
    std::string where = StrCat("layout manifest bucket ", manifest.buckets.size());
    ZG_RETURN_IF_NOT(b.is_object(), where, " is not an object");
    ZG_RETURN_IF_ERROR(Field(b, "id", where, bucket.id));
    ZG_ASSIGN_OR_RETURN(bucket.dtype, ParseDtype(b.value("dtype", Json()), where));
    ZG_RETURN_IF_ERROR(Field(b, "total", where, bucket.total));
    ZG_RETURN_IF_ERROR(Field(b, "shard_size", where, bucket.shard_size));
    ZG_RETURN_IF_ERROR(Field(b, "optimizer", where, bucket.optimizer));
    ZG_RETURN_IF_ERROR(Field(b, "param_buffer", where, bucket.param_buffer));
    ZG_RETURN_IF_ERROR(Field(b, "state_buffers", where, bucket.state_buffers));
    auto dtypes = b.find("state_dtypes");
    ZG_RETURN_IF_NOT(
        dtypes != b.end() && dtypes->is_array() && dtypes->size() == bucket.state_buffers.size(),
        where, ": 'state_dtypes' must list one dtype per state buffer");
    for (const Json& d : *dtypes) {
      ZG_ASSIGN_OR_RETURN(DataType dtype, ParseDtype(d, where));
      bucket.state_dtypes.push_back(dtype);
    }
    if (b.contains("master_state")) {
      ZG_RETURN_IF_ERROR(Field(b, "master_state", where, bucket.master_state));
      ZG_RETURN_IF_NOT(
          bucket.master_state >= 0 &&
              bucket.master_state < static_cast<int64_t>(bucket.state_buffers.size()) &&
              bucket.state_dtypes[static_cast<size_t>(bucket.master_state)] == DataType::kFloat32,
          where, ": 'master_state' ", bucket.master_state, " is no fp32 state of the bucket");
    }
    auto params = b.find("params");
    ZG_RETURN_IF_NOT(params != b.end() && params->is_array() && !params->empty(), where,
                     ": 'params' must be a non-empty array");
    int64_t expected_offset = 0;
    for (const Json& p : *params) {
      Param param;
      ZG_RETURN_IF_ERROR(Field(p, "name", where, param.name));
      std::string param_where = StrCat(where, " parameter '", param.name, "'");
      ZG_RETURN_IF_ERROR(Field(p, "shape", param_where, param.shape));
      ZG_RETURN_IF_ERROR(Field(p, "offset", param_where, param.offset));
      ZG_RETURN_IF_ERROR(Field(p, "numel", param_where, param.numel));
      ZG_RETURN_IF_ERROR(Field(p, "padded", param_where, param.padded));
      ZG_RETURN_IF_ERROR(Field(p, "states", param_where, param.states));
      StatusOr<int64_t> numel = CheckedNumElements(param.shape);
      ZG_RETURN_IF_NOT(numel.ok() && *numel == param.numel, param_where, ": numel ", param.numel,
                       " does not match its shape");
      ZG_RETURN_IF_NOT(param.numel < kMaxElements, param_where, ": numel ", param.numel,
                       " is not below 2^62");
      ZG_RETURN_IF_NOT(param.offset == expected_offset, param_where, ": offset ", param.offset,
                       ", expected ", expected_offset, " (parameters lie back to back)");
      // Compact: the last parameter's padding is checked with the bucket's total below.
      const int64_t expected_padded = manifest.align == Alignment::kSeed
                                          ? PaddedNumel(param.numel, bucket.dtype, manifest.nranks)
                                          : param.numel;
      const bool last = &p == &params->back();
      ZG_RETURN_IF_NOT(param.padded == expected_padded || (manifest.align == Alignment::kCompact &&
                                                           last && param.padded > param.numel),
                       param_where, ": padded size ", param.padded, " is not ", expected_padded);
      ZG_RETURN_IF_NOT(param.states.size() == bucket.state_buffers.size(), param_where, ": lists ",
                       param.states.size(), " states, the bucket has ",
                       bucket.state_buffers.size());
      ZG_RETURN_IF_NOT(param.padded < kMaxElements - expected_offset, where,
                       ": the padded sizes add up to 2^62 elements or more");
      expected_offset += param.padded;
      bucket.params.push_back(std::move(param));
    }
    ZG_RETURN_IF_NOT(bucket.total == expected_offset, where, ": total ", bucket.total,
                     " is not the sum of padded sizes ", expected_offset);
    if (manifest.align == Alignment::kCompact) {
      const Param& last = bucket.params.back();
      const int64_t unpadded = last.offset + last.numel;
      ZG_RETURN_IF_NOT(bucket.total == PaddedNumel(unpadded, bucket.dtype, manifest.nranks), where,
                       ": total ", bucket.total, " is not its ", unpadded,
                       " elements padded to the granularity, as the compact alignment has it");
    }
    ZG_RETURN_IF_NOT(
        bucket.total % manifest.nranks == 0 && bucket.shard_size == bucket.total / manifest.nranks,
        where, ": shard size ", bucket.shard_size, " times ", manifest.nranks,
        " ranks is not the total ", bucket.total);
    manifest.buckets.push_back(std::move(bucket));
  }
  auto whole = root.find("whole");
  if (whole != root.end()) {
    ZG_RETURN_IF_NOT(whole->is_array(), "layout manifest: 'whole' must be an array");
    for (const Json& w : *whole) {
      WholeParam param;
      ZG_RETURN_IF_ERROR(Field(w, "name", "layout manifest whole parameter", param.name));
      ZG_RETURN_IF_ERROR(Field(w, "reason", "layout manifest whole parameter", param.reason));
      manifest.whole.push_back(std::move(param));
    }
  }
  auto hash = root.find("hash");
  if (hash != root.end()) {
    ZG_RETURN_IF_NOT(hash->is_string() && hash->get<std::string>() == manifest.Hash(),
                     "layout manifest hash does not match its contents (edited by hand?)");
  }
  return manifest;
}

}  // namespace zerograph
