#include "zerograph/ir/layout_manifest.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zerograph
