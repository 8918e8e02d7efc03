#include "zerograph/ir/layout_manifest.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace zerograph {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kAlignmentBytes = 256;

Json ManifestBody(const LayoutManifest& manifest) {
  Json buckets = Json::array();
  for (const LayoutManifest::Bucket& bucket : manifest.buckets) {
    Json params = Json::array();
    for (const LayoutManifest::Param& param : bucket.params) {
      params.push_back({{"name", param.name},
                        {"shape", param.shape},
                        {"offset", param.offset},
                        {"numel", param.numel},
                        {"padded", param.padded},
                        {"states", param.states}});
    }
    Json state_dtypes = Json::array();
    for (DataType dtype : bucket.state_dtypes) state_dtypes.push_back(DataTypeName(dtype));
    buckets.push_back({{"id", bucket.id},
                       {"dtype", DataTypeName(bucket.dtype)},
                       {"total", bucket.total},
                       {"shard_size", bucket.shard_size},
                       {"optimizer", bucket.optimizer},
                       {"param_buffer", bucket.param_buffer},
                       {"state_buffers", bucket.state_buffers},
                       {"state_dtypes", state_dtypes},
                       {"params", params}});
  }
  Json whole = Json::array();
  for (const LayoutManifest::WholeParam& param : manifest.whole) {
    whole.push_back({{"name", param.name}, {"reason", param.reason}});
  }
  return Json{
      {"format_version", 1}, {"nranks", manifest.nranks}, {"buckets", buckets}, {"whole", whole}};
}

std::string Fnv1a64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return StrCat("fnv1a64:", hex);
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

// Reads a typed field, reporting the path of a missing or mistyped one.
template <typename T>
Status Field(const Json& object, const char* key, std::string_view where, T& out) {
  auto it = object.find(key);
  ZG_RETURN_IF_NOT(it != object.end(), where, ": missing '", key, "'");
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

std::string LayoutManifest::Hash() const { return Fnv1a64(ManifestBody(*this).dump()); }

std::string LayoutManifest::ToJson() const {
  Json body = ManifestBody(*this);
  body["hash"] = Fnv1a64(body.dump());
  return body.dump();
}

StatusOr<LayoutManifest> LayoutManifest::FromJson(std::string_view json) {
  Json root = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  ZG_RETURN_IF_NOT(!root.is_discarded() && root.is_object(),
                   "layout manifest is not a JSON object");
  int64_t version = 0;
  ZG_RETURN_IF_ERROR(Field(root, "format_version", "layout manifest", version));
  ZG_RETURN_IF_NOT(version == 1, "layout manifest has format_version ", version,
                   "; this build reads 1");
  LayoutManifest manifest;
  ZG_RETURN_IF_ERROR(Field(root, "nranks", "layout manifest", manifest.nranks));
  ZG_RETURN_IF_NOT(manifest.nranks >= 1, "layout manifest: nranks must be at least 1");
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
      int64_t numel = 1;
      for (int64_t d : param.shape) numel *= d;
      ZG_RETURN_IF_NOT(numel == param.numel, param_where, ": numel ", param.numel,
                       " does not match its shape");
      ZG_RETURN_IF_NOT(param.offset == expected_offset, param_where, ": offset ", param.offset,
                       ", expected ", expected_offset, " (parameters lie back to back)");
      ZG_RETURN_IF_NOT(param.padded == PaddedNumel(param.numel, bucket.dtype, manifest.nranks),
                       param_where, ": padded size ", param.padded, " is not ",
                       PaddedNumel(param.numel, bucket.dtype, manifest.nranks));
      ZG_RETURN_IF_NOT(param.states.size() == bucket.state_buffers.size(), param_where, ": lists ",
                       param.states.size(), " states, the bucket has ",
                       bucket.state_buffers.size());
      expected_offset += param.padded;
      bucket.params.push_back(std::move(param));
    }
    ZG_RETURN_IF_NOT(bucket.total == expected_offset, where, ": total ", bucket.total,
                     " is not the sum of padded sizes ", expected_offset);
    ZG_RETURN_IF_NOT(bucket.shard_size * manifest.nranks == bucket.total, where, ": shard size ",
                     bucket.shard_size, " times ", manifest.nranks, " ranks is not the total ",
                     bucket.total);
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
