#include "zerograph/ckpt/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

// Two fp32 parameters a [3,5] and b [7] with one state each, fused into one bucket for `nranks`.
StateModel TwoParamModel(int64_t nranks) {
  LayoutManifest layout;
  layout.nranks = nranks;
  LayoutManifest::Bucket bucket;
  bucket.dtype = DataType::kFloat32;
  bucket.optimizer = "org.zerograph.SGD";
  bucket.param_buffer = "fused@bucket0";
  bucket.state_buffers = {"fused@bucket0.state0"};
  bucket.state_dtypes = {DataType::kFloat32};
  int64_t offset = 0;
  for (auto [name, shape] :
       {std::pair<std::string, std::vector<int64_t>>{"a", {3, 5}}, {"b", {7}}}) {
    LayoutManifest::Param p;
    p.name = name;
    p.shape = shape;
    p.numel = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    p.offset = offset;
    p.padded = PaddedNumel(p.numel, DataType::kFloat32, nranks);
    p.states = {name + ".m"};
    offset += p.padded;
    bucket.params.push_back(p);
  }
  bucket.total = offset;
  bucket.shard_size = offset / nranks;
  layout.buckets.push_back(bucket);
  StateModel model;
  model.layout = layout;
  model.buffers = {{"fused@bucket0", DataType::kFloat32, {offset}},
                   {"fused@bucket0.state0", DataType::kFloat32, {offset}}};
  model.canonical = {{"a", DataType::kFloat32, {3, 5}, true},
                     {"a.m", DataType::kFloat32, {3, 5}, false},
                     {"b", DataType::kFloat32, {7}, true},
                     {"b.m", DataType::kFloat32, {7}, false}};
  return model;
}

// The value of element i of canonical tensor `name`: distinct everywhere.
float Value(const std::string& name, int64_t i) {
  return static_cast<float>(name[0] == 'a' ? 100 : 200) + (name.size() > 1 ? 0.5f : 0.f) +
         static_cast<float>(i) * 1000.f;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            StrCat("zg_checkpoint_test_", ::getpid(), "_",
                   ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `model`'s buffers as an unbalanced checkpoint of `kind` filled with Value().
  void Write(const StateModel& model, CheckpointKind kind) {
    const CheckpointPlan plan = PlanCheckpoint(kind, model, model.nranks());
    PieceSource source = [&](const CheckpointTensor& t, int64_t begin, int64_t end,
                             std::span<std::byte> out) -> Status {
      std::vector<float> values;
      for (int64_t e = begin; e < end; ++e) {
        float v = 0;
        if (auto ref = model.FindBucketBuffer(t.name)) {
          for (const auto& p : ref->bucket->params) {
            if (e >= p.offset && e < p.offset + p.numel) {
              v = Value(ref->state < 0 ? p.name : p.states[0], e - p.offset);
            }
          }
        } else {
          v = Value(t.name, e);
        }
        values.push_back(v);
      }
      std::memcpy(out.data(), values.data(), out.size());
      return Status::Ok();
    };
    CheckpointManifest manifest;
    manifest.kind = kind;
    manifest.nranks = model.nranks();
    manifest.layout = model.layout;
    manifest.model = model;
    manifest.model_hash = model.ModelHash();
    manifest.tensors = plan.tensors;
    for (size_t i = 0; i < plan.files.size(); ++i) {
      StatusOr<CheckpointManifest::File> file =
          WriteCheckpointFile(dir_, plan, i, source, /*chunk_bytes=*/12);
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      manifest.files.push_back(*file);
    }
    std::ofstream(dir_ + "/manifest.json") << manifest.ToJson();
  }

  // Flips one bit of byte `at` of `file` in the checkpoint.
  void FlipByte(const std::string& file, int64_t at) {
    std::fstream f(dir_ + "/" + file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at);
    char c = 0;
    f.get(c);
    f.seekp(at);
    f.put(static_cast<char>(c ^ 1));
  }
  // Reads every canonical tensor whole.
  Status ReadAllCanonical(CheckpointReader& reader, const StateModel& model) {
    for (const StateTensor& t : model.canonical) {
      std::vector<float> values(static_cast<size_t>(t.numel()));
      ZG_RETURN_IF_ERROR(
          reader.ReadCanonical(t.name, 0, t.numel(), std::as_writable_bytes(std::span(values))));
      for (int64_t i = 0; i < t.numel(); ++i) {
        ZG_RETURN_IF_NOT(values[i] == Value(t.name, i), t.name, "[", i, "] = ", values[i]);
      }
    }
    return Status::Ok();
  }

  std::string dir_;
};

// An unbalanced checkpoint of 2 ranks reads back per parameter and into a 3-rank layout, the
// padding zero.
TEST_F(CheckpointTest, UnbalancedReadsIntoAnotherLayout) {
  Write(TwoParamModel(2), CheckpointKind::kUnbalanced);
  StatusOr<std::unique_ptr<CheckpointReader>> reader = CheckpointReader::Open(dir_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE((*reader)->VerifyAll().ok());
  std::vector<float> b(7);
  ASSERT_TRUE((*reader)->ReadCanonical("b.m", 0, 7, std::as_writable_bytes(std::span(b))).ok());
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(b[i], Value("b.m", i));

  const StateModel three = TwoParamModel(3);
  const auto& bucket = three.layout->buckets[0];
  std::vector<float> shard(bucket.shard_size);
  const int64_t begin = bucket.shard_size;  // rank 1's shard
  ASSERT_TRUE((*reader)
                  ->ReadBuffer(three, "fused@bucket0.state0", begin, begin + bucket.shard_size,
                               std::as_writable_bytes(std::span(shard)))
                  .ok());
  for (int64_t i = 0; i < bucket.shard_size; ++i) {
    const int64_t e = begin + i;
    float expected = 0;
    for (const auto& p : bucket.params) {
      if (e >= p.offset && e < p.offset + p.numel) expected = Value(p.states[0], e - p.offset);
    }
    EXPECT_EQ(shard[i], expected) << "element " << e;
  }
}

// Reading into a layout whose padding differs locates every element in the stored pieces and
// leaves the padding without a source (read as zeros).
TEST_F(CheckpointTest, LocatesSourcesAndPadding) {
  Write(TwoParamModel(2), CheckpointKind::kUnbalanced);
  StatusOr<std::unique_ptr<CheckpointReader>> reader = CheckpointReader::Open(dir_);
  ASSERT_TRUE(reader.ok());
  const StateModel three = TwoParamModel(3);
  const auto& bucket = three.layout->buckets[0];
  StatusOr<std::vector<CheckpointReader::SourceRange>> ranges =
      (*reader)->LocateBuffer(three, "fused@bucket0", 0, bucket.total, bucket.total * 4);
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  int64_t bytes = 0, previous_end = 0;
  for (const CheckpointReader::SourceRange& r : *ranges) {
    EXPECT_EQ(r.tensor->name, "fused@bucket0");
    EXPECT_GE(r.out_offset, previous_end);
    previous_end = r.out_offset + r.end - r.begin;
    bytes += r.end - r.begin;
  }
  EXPECT_EQ(bytes, (15 + 7) * 4);  // a and b; the padding has no source
  EXPECT_LT(bytes, bucket.total * 4);
}

// Checksums verified while reading: a flipped byte the reads never touch (bucket padding) goes
// unnoticed by them and is found by VerifyAll.
TEST_F(CheckpointTest, WhileReadingVerifyAllFindsCorruptionNoReadTouched) {
  const StateModel model = TwoParamModel(2);
  Write(model, CheckpointKind::kUnbalanced);
  // The last byte of rank 1's file is padding of the last buffer it holds.
  const std::string rank1 = RankFileName(1, 2);
  FlipByte(rank1, static_cast<int64_t>(fs::file_size(dir_ + "/" + rank1)) - 1);
  StatusOr<std::unique_ptr<CheckpointReader>> reader =
      CheckpointReader::Open(dir_, ChecksumTiming::kWhileReading);
  ASSERT_TRUE(reader.ok());
  Status read = ReadAllCanonical(**reader, model);
  ASSERT_TRUE(read.ok()) << read.ToString();
  Status verified = (*reader)->VerifyAll();
  ASSERT_FALSE(verified.ok());
  EXPECT_EQ(verified.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(verified.message()),
              ::testing::HasSubstr(StrCat("'", rank1, "' fails its checksum")));
}

// Checksums verified while reading: an intact checkpoint passes VerifyAll after every read.
TEST_F(CheckpointTest, WhileReadingVerifyAllPassesIntactFiles) {
  const StateModel model = TwoParamModel(2);
  Write(model, CheckpointKind::kUnbalanced);
  StatusOr<std::unique_ptr<CheckpointReader>> reader =
      CheckpointReader::Open(dir_, ChecksumTiming::kWhileReading);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(ReadAllCanonical(**reader, model).ok());
  Status verified = (*reader)->VerifyAll();
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

// Checksums verified before reading: the first read from a corrupt file fails.
TEST_F(CheckpointTest, BeforeReadingRefusesTheFirstRead) {
  const StateModel model = TwoParamModel(2);
  Write(model, CheckpointKind::kUnbalanced);
  const std::string rank1 = RankFileName(1, 2);
  FlipByte(rank1, static_cast<int64_t>(fs::file_size(dir_ + "/" + rank1)) - 1);
  StatusOr<std::unique_ptr<CheckpointReader>> reader = CheckpointReader::Open(dir_);
  ASSERT_TRUE(reader.ok());
  Status read = ReadAllCanonical(**reader, model);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(std::string(read.message()), ::testing::HasSubstr("fails its checksum"));
}

// A balanced checkpoint splits every canonical tensor evenly and reads back whole.
TEST_F(CheckpointTest, BalancedSplitsEvenly) {
  const StateModel model = TwoParamModel(2);
  const CheckpointPlan plan = PlanCheckpoint(CheckpointKind::kBalanced, model, 3);
  ASSERT_EQ(plan.files.size(), 3u);
  for (const CheckpointTensor& t : plan.tensors) {
    ASSERT_EQ(t.pieces.size(), 3u) << t.name;
    EXPECT_EQ(t.pieces.back().end, t.numel());
  }
}

// A manifest whose pieces overlap is refused, naming the tensor.
TEST_F(CheckpointTest, RefusesOverlappingPieces) {
  Write(TwoParamModel(2), CheckpointKind::kUnbalanced);
  std::ifstream in(dir_ + "/manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StatusOr<CheckpointManifest> manifest = CheckpointManifest::FromJson(text);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  manifest->tensors[0].pieces[1].begin -= 1;
  StatusOr<CheckpointManifest> parsed = CheckpointManifest::FromJson(manifest->ToJson());
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()), ::testing::HasSubstr("overlapping pieces"));
}

}  // namespace
}  // namespace zerograph
