#include "ort_import/ort_checkpoint.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ort_import/checkpoint_builder.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"
#include "zerograph/onnx/load_model.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;
using testing::TestCheckpoint;
using testing::TestOptimizerGroup;
using testing::TestTensor;
using testing::WriteCheckpoint;

const std::string kMlp = std::string(ZG_SOURCE_DIR) + "/tests/data/ort_reference/mlp";

class OrtCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zg_ort_checkpoint_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// ORT's own checkpoint: the module state's six trainable parameters, in order, holding the forward
// model's initial weights; no optimizer groups.
TEST_F(OrtCheckpointTest, ReadsOnnxRuntimesCheckpoint) {
  StatusOr<OrtCheckpoint> checkpoint = ReadOrtCheckpoint(kMlp + "/artifacts/checkpoint");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  ASSERT_EQ(checkpoint->trainable.size(), 6u);
  EXPECT_TRUE(checkpoint->frozen.empty());
  EXPECT_TRUE(checkpoint->optimizer_groups.empty());
  const char* names[] = {"fc0.weight", "fc0.bias",   "fc1.weight",
                         "fc1.bias",   "fc2.weight", "fc2.bias"};
  auto forward = LoadModel(kMlp + "/forward.onnx");
  ASSERT_TRUE(forward.ok()) << forward.status().ToString();
  for (size_t i = 0; i < 6; ++i) {
    const OrtTensor& tensor = checkpoint->trainable[i];
    EXPECT_EQ(tensor.name, names[i]);
    EXPECT_EQ(tensor.dtype, DataType::kFloat32);
    EXPECT_EQ(tensor.dims, (i % 2 == 0 ? std::vector<int64_t>{16, 16} : std::vector<int64_t>{16}));
    const Value* initial = (*forward)->FindValue(names[i]);
    ASSERT_NE(initial, nullptr);
    auto bytes = initial->initializer()->Bytes();
    ASSERT_TRUE(bytes.ok());
    ASSERT_EQ(bytes->size(), tensor.bytes.size()) << names[i];
    EXPECT_EQ(std::memcmp(bytes->data(), tensor.bytes.data(), bytes->size()), 0) << names[i];
  }
}

// A truncated checkpoint is refused with an error naming the file, never read out of bounds;
// only a prefix that drops nothing the reader reads (the last padding bytes) may read, and then
// reads the same tensors. Every length near either end, and every 7th in between (files are
// written one by one, so all 3704 would take seconds).
TEST_F(OrtCheckpointTest, TruncationIsRefused) {
  const std::string original = kMlp + "/artifacts/checkpoint";
  std::ifstream in(original, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  StatusOr<OrtCheckpoint> whole = ReadOrtCheckpoint(original);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const std::string path = Path("checkpoint");
  int refused = 0;
  for (size_t length = 0; length < bytes.size();
       length += (length < 64 || length + 64 >= bytes.size()) ? 1 : 7) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, length);
    StatusOr<OrtCheckpoint> checkpoint = ReadOrtCheckpoint(path);
    if (!checkpoint.ok()) {
      ++refused;
      EXPECT_NE(checkpoint.status().message().find(path), std::string_view::npos)
          << checkpoint.status().ToString();
      continue;
    }
    EXPECT_GE(length, bytes.size() - 8) << "a prefix of " << length << " bytes was read";
    ASSERT_EQ(checkpoint->trainable.size(), whole->trainable.size());
    for (size_t i = 0; i < whole->trainable.size(); ++i) {
      const OrtTensor& got = checkpoint->trainable[i];
      const OrtTensor& expected = whole->trainable[i];
      EXPECT_EQ(got.name, expected.name);
      ASSERT_EQ(got.bytes.size(), expected.bytes.size());
      EXPECT_EQ(std::memcmp(got.bytes.data(), expected.bytes.data(), got.bytes.size()), 0);
    }
  }
  EXPECT_GT(refused, 500);
}

// An optimizer group's step, learning rate and per-parameter states are read.
TEST_F(OrtCheckpointTest, ReadsOptimizerStates) {
  TestCheckpoint written;
  written.trainable = {{"w", {2, 2}, {1, 2, 3, 4}}};
  written.frozen = {{"c", {1}, {7}}};
  written.group = TestOptimizerGroup{3,
                                     0.5f,
                                     {{"w",
                                       {{"momentum0", {2, 2}, {0.1f, 0.2f, 0.3f, 0.4f}},
                                        {"momentum1", {2, 2}, {1e-3f, 2e-3f, 3e-3f, 4e-3f}}}}}};
  WriteCheckpoint(Path("checkpoint"), written);
  StatusOr<OrtCheckpoint> checkpoint = ReadOrtCheckpoint(Path("checkpoint"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  ASSERT_EQ(checkpoint->frozen.size(), 1u);
  EXPECT_EQ(checkpoint->frozen[0].name, "c");
  ASSERT_EQ(checkpoint->optimizer_groups.size(), 1u);
  const OrtOptimizerGroup& group = checkpoint->optimizer_groups[0];
  EXPECT_EQ(group.step, 3);
  EXPECT_EQ(group.initial_learning_rate, 0.5f);
  ASSERT_EQ(group.states.count("w"), 1u);
  const OrtTensor& m1 = group.states.at("w").at("momentum1");
  ASSERT_EQ(m1.bytes.size(), 16u);
  float values[4];
  std::memcpy(values, m1.bytes.data(), sizeof(values));
  EXPECT_EQ(values[2], 3e-3f);
}

// A tensor whose bytes do not fill its shape is DataLoss naming the tensor.
TEST_F(OrtCheckpointTest, BytesNotMatchingShapeAreDataLoss) {
  TestCheckpoint written;
  written.trainable = {TestTensor::WithBytes("w", {2, 2}, std::vector<uint8_t>(12, 0))};
  WriteCheckpoint(Path("checkpoint"), written);
  StatusOr<OrtCheckpoint> checkpoint = ReadOrtCheckpoint(Path("checkpoint"));
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(checkpoint.status().message().find("tensor 'w' holds 12 bytes"), std::string_view::npos)
      << checkpoint.status().ToString();
}

// A nominal checkpoint names parameters without values: refused.
TEST_F(OrtCheckpointTest, NominalCheckpointIsRefused) {
  TestCheckpoint written;
  written.trainable = {TestTensor::WithBytes("w", {2}, {})};
  written.nominal = true;
  WriteCheckpoint(Path("checkpoint"), written);
  StatusOr<OrtCheckpoint> checkpoint = ReadOrtCheckpoint(Path("checkpoint"));
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_NE(checkpoint.status().message().find("nominal"), std::string_view::npos)
      << checkpoint.status().ToString();
}

}  // namespace
}  // namespace zerograph
