#include "zerograph/ir/layout_manifest.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace zerograph {
namespace {

LayoutManifest SeedExample() {
  LayoutManifest manifest;
  manifest.nranks = 2;
  LayoutManifest::Bucket bucket;
  bucket.dtype = DataType::kFloat32;
  bucket.total = 384;
  bucket.shard_size = 192;
  bucket.optimizer = "org.zerograph.AdamW";
  bucket.param_buffer = "fused@bucket0";
  bucket.state_buffers = {"fused@bucket0.state0", "fused@bucket0.state1"};
  bucket.state_dtypes = {DataType::kFloat32, DataType::kFloat32};
  bucket.params.push_back({"w0", {16, 16}, 0, 256, 256, {"w0.m1", "w0.m2"}});
  bucket.params.push_back({"w1", {16, 8}, 256, 128, 128, {"w1.m1", "w1.m2"}});
  manifest.buckets.push_back(bucket);
  manifest.whole.push_back({"scale", "element type double cannot be sharded"});
  return manifest;
}

// The granularity is 256·N/E² elements: fp32 16·N, fp16 and bf16 64·N; other types are not sharded.
TEST(LayoutManifestTest, PaddingGranularity) {
  EXPECT_EQ(PaddingGranularity(DataType::kFloat32, 2), 32);
  EXPECT_EQ(PaddingGranularity(DataType::kFloat16, 2), 128);
  EXPECT_EQ(PaddingGranularity(DataType::kBFloat16, 3), 192);
  EXPECT_EQ(PaddingGranularity(DataType::kFloat64, 2), 0);
  EXPECT_EQ(PaddedNumel(256, DataType::kFloat32, 2), 256);
  EXPECT_EQ(PaddedNumel(257, DataType::kFloat32, 2), 288);
  EXPECT_EQ(PaddedNumel(100, DataType::kFloat16, 2), 128);
}

// JSON round-trips exactly, with a hash that changes with the contents.
TEST(LayoutManifestTest, JsonRoundTrip) {
  LayoutManifest manifest = SeedExample();
  auto parsed = LayoutManifest::FromJson(manifest.ToJson());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, manifest);
  EXPECT_EQ(parsed->Hash(), manifest.Hash());
  LayoutManifest other = manifest;
  other.buckets[0].params[1].name = "w2";
  EXPECT_NE(other.Hash(), manifest.Hash());
}

// The manifest as nlohmann's ordered_json dumps it: the canonical form that ToJson writes directly.
nlohmann::ordered_json NlohmannBody(const LayoutManifest& manifest) {
  using Json = nlohmann::ordered_json;
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

std::string Fnv1a64(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return std::string("fnv1a64:") + hex;
}

// ToJson and Hash write exactly what dumping the manifest through nlohmann's ordered_json does
// (the format and hashes of earlier builds), names to escape and non-ASCII names included, with
// empty lists and more than one bucket.
TEST(LayoutManifestTest, CanonicalJsonIsNlohmannDump) {
  LayoutManifest manifest = SeedExample();
  manifest.buckets[0].params[0].name = "w\"0\\\n\t\x01 caf\xc3\xa9";
  LayoutManifest::Bucket second = manifest.buckets[0];
  second.id = 1;
  second.state_buffers.clear();
  second.state_dtypes.clear();
  second.params[1].shape.clear();
  second.params[1].states.clear();
  manifest.buckets.push_back(second);
  manifest.whole.push_back({"tab\tname", "reason with \"quotes\""});
  for (const LayoutManifest& m : {manifest, LayoutManifest()}) {
    nlohmann::ordered_json body = NlohmannBody(m);
    EXPECT_EQ(m.Hash(), Fnv1a64(body.dump()));
    body["hash"] = Fnv1a64(body.dump());
    EXPECT_EQ(m.ToJson(), body.dump());
  }
}

// A hand-edited manifest whose hash no longer matches is refused.
TEST(LayoutManifestTest, RejectsHashMismatch) {
  std::string json = SeedExample().ToJson();
  json.replace(json.find("\"w1\""), 4, "\"wX\"");
  auto parsed = LayoutManifest::FromJson(json);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("hash"), std::string_view::npos);
}

// Offsets must be back to back and shards must tile the bucket.
TEST(LayoutManifestTest, RejectsInconsistentLayout) {
  LayoutManifest bad = SeedExample();
  bad.buckets[0].params[1].offset = 250;
  auto parsed = LayoutManifest::FromJson(bad.ToJson());
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("parameter 'w1': offset 250"), std::string_view::npos)
      << parsed.status().message();
  bad = SeedExample();
  bad.buckets[0].shard_size = 190;
  EXPECT_FALSE(LayoutManifest::FromJson(bad.ToJson()).ok());
  EXPECT_FALSE(LayoutManifest::FromJson("{not json").ok());
}

// Counts that would overflow the layout's arithmetic are refused by name: more ranks than an int
// holds (a fuzzer's manifest, whose padding overflowed), a parameter of 2^62 elements, and padded
// sizes that add up to 2^62.
TEST(LayoutManifestTest, RejectsCountsBeyondItsArithmetic) {
  auto refusal = [](const LayoutManifest& manifest) {
    StatusOr<LayoutManifest> parsed = LayoutManifest::FromJson(manifest.ToJson());
    return parsed.ok() ? std::string("accepted") : std::string(parsed.status().message());
  };
  LayoutManifest ranks = SeedExample();
  ranks.nranks = INT64_MAX;
  EXPECT_NE(refusal(ranks).find("nranks must be from 1 to 2147483647, got 9223372036854775807"),
            std::string::npos)
      << refusal(ranks);

  constexpr int64_t k2To31 = int64_t{1} << 31;
  LayoutManifest huge = SeedExample();
  LayoutManifest::Param& param = huge.buckets[0].params[0];
  param.shape = {k2To31, k2To31};
  param.numel = param.padded = k2To31 * k2To31;
  EXPECT_NE(refusal(huge).find("parameter 'w0': numel 4611686018427387904 is not below 2^62"),
            std::string::npos)
      << refusal(huge);

  LayoutManifest sum = SeedExample();
  for (size_t i = 0; i < 2; ++i) {
    LayoutManifest::Param& half = sum.buckets[0].params[i];
    half.shape = {k2To31 / 2, k2To31};
    half.numel = half.padded = k2To31 * k2To31 / 2;
    half.offset = static_cast<int64_t>(i) * half.numel;
  }
  EXPECT_NE(refusal(sum).find("bucket 0: the padded sizes add up to 2^62 elements or more"),
            std::string::npos)
      << refusal(sum);
}

// The compact alignment pads only the bucket's end (the last parameter's padded size): 5 + 3 = 8
// elements on 2 fp32 ranks become 32. Its JSON says so, and a seed layout's JSON does not, so that
// seed layouts keep their hash.
TEST(LayoutManifestTest, CompactAlignmentRoundTrip) {
  LayoutManifest manifest;
  manifest.nranks = 2;
  manifest.align = LayoutManifest::Alignment::kCompact;
  LayoutManifest::Bucket bucket;
  bucket.total = 32;
  bucket.shard_size = 16;
  bucket.optimizer = "org.zerograph.SGD";
  bucket.param_buffer = "fused@bucket0";
  bucket.params.push_back({"a", {5}, 0, 5, 5, {}});
  bucket.params.push_back({"b", {3}, 5, 3, 27, {}});
  manifest.buckets.push_back(bucket);
  const std::string json = manifest.ToJson();
  EXPECT_NE(json.find(R"("align":"compact")"), std::string::npos) << json;
  EXPECT_EQ(SeedExample().ToJson().find("align"), std::string::npos);
  StatusOr<LayoutManifest> parsed = LayoutManifest::FromJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, manifest);
  EXPECT_NE(manifest.Hash(), [&] {
    LayoutManifest seed = manifest;
    seed.align = LayoutManifest::Alignment::kSeed;
    return seed.Hash();
  }());

  // Padding elsewhere than at the end, or more than the end needs, is refused.
  LayoutManifest inner = manifest;
  inner.buckets[0].params[0].padded = 6;
  inner.buckets[0].params[1].offset = 6;
  inner.buckets[0].params[1].padded = 26;
  EXPECT_FALSE(LayoutManifest::FromJson(inner.ToJson()).ok());
  LayoutManifest too_much = manifest;
  too_much.buckets[0].total = 64;
  too_much.buckets[0].shard_size = 32;
  too_much.buckets[0].params[1].padded = 59;
  StatusOr<LayoutManifest> refused = LayoutManifest::FromJson(too_much.ToJson());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("compact"), std::string_view::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace zerograph
