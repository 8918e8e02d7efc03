#include "zerograph/ckpt/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::span<const std::byte> Bytes(const std::vector<T>& values) {
  return std::as_bytes(std::span(values));
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              StrCat("zg_safetensors_test_", ::getpid(), "_",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(folder_);
    path_ = (folder_ / "t.safetensors").string();
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(folder_, error);
  }

  // Writes a file by hand: the 8-byte header length, the header, then `data_bytes` bytes of data.
  void WriteRaw(std::string_view header, size_t data_bytes, std::optional<uint64_t> length = {}) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    uint64_t n = length.value_or(header.size());
    char prefix[8];
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    out.write(prefix, 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    std::string data(data_bytes, '\x01');
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }

  // Opening fails with `code` and a message naming the file and `culprit`.
  void ExpectOpenFails(StatusCode code, std::string_view culprit) {
    StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path_);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), code) << file.status().ToString();
    EXPECT_THAT(std::string(file.status().message()), ::testing::HasSubstr(path_));
    EXPECT_THAT(std::string(file.status().message()), ::testing::HasSubstr(culprit));
  }

  fs::path folder_;
  std::string path_;
};

// Tensors of several dtypes and the metadata read back as written, larger elements first.
TEST_F(SafetensorsTest, RoundTrip) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> step = {42};
  const std::vector<uint16_t> half = {0x3c00, 0x4000, 0x4200};
  const std::vector<uint8_t> mask = {1, 0};
  const std::vector<uint16_t> empty;
  const SafetensorsWriteEntry tensors[] = {
      {"w", DataType::kFloat32, {2, 3}, Bytes(w)},
      {"b", DataType::kFloat16, {3}, Bytes(half)},
      {"step", DataType::kInt64, {}, Bytes(step)},
      {"mask", DataType::kBool, {2}, Bytes(mask)},
      {"nothing", DataType::kBFloat16, {2, 0}, Bytes(empty)},
  };
  const std::pair<std::string, std::string> metadata[] = {{"format", "pt"}, {"rank", "1"}};
  ASSERT_TRUE(WriteSafetensors(path_, tensors, metadata).ok());

  StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::vector<std::string> order;
  for (const auto& info : (*file)->tensors()) order.push_back(info.name);
  EXPECT_EQ(order, (std::vector<std::string>{"step", "w", "b", "nothing", "mask"}));
  for (const SafetensorsWriteEntry& entry : tensors) {
    const SafetensorsFile::TensorInfo* info = (*file)->Find(entry.name);
    ASSERT_NE(info, nullptr) << entry.name;
    EXPECT_EQ(info->dtype, entry.dtype) << entry.name;
    EXPECT_EQ(info->shape, entry.shape) << entry.name;
    ASSERT_EQ(info->bytes.size(), entry.bytes.size()) << entry.name;
    if (entry.bytes.empty()) continue;  // memcmp of null pointers is undefined, even for 0 bytes
    EXPECT_EQ(std::memcmp(info->bytes.data(), entry.bytes.data(), entry.bytes.size()), 0);
  }
  EXPECT_EQ((*file)->Find("missing"), nullptr);
  EXPECT_EQ((*file)->metadata(), (std::vector<std::pair<std::string, std::string>>(
                                     std::begin(metadata), std::end(metadata))));
  EXPECT_EQ((*file)->FindMetadata("rank"), "1");

  // The header starts with '{' and is padded so the data starts 8-byte aligned.
  std::span<const std::byte> raw = (*file)->mapping()->bytes();
  uint64_t header_size = 0;
  std::memcpy(&header_size, raw.data(), 8);
  EXPECT_EQ(header_size % 8, 0u);
  EXPECT_EQ(static_cast<char>(raw[8]), '{');
  EXPECT_EQ(raw.size(), 8 + header_size + 24 + 8 + 6 + 2);
}

// The exact bytes of a small file: metadata first, offsets back to back, spaces as padding.
TEST_F(SafetensorsTest, WritesReferenceLayout) {
  const std::vector<float> w = {1.0f, 2.0f};
  const SafetensorsWriteEntry tensors[] = {{"w", DataType::kFloat32, {2}, Bytes(w)}};
  const std::pair<std::string, std::string> metadata[] = {{"format", "pt"}};
  ASSERT_TRUE(WriteSafetensors(path_, tensors, metadata).ok());
  std::ifstream in(path_, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const size_t padded = (header.size() + 7) / 8 * 8;
  ASSERT_EQ(content.size(), 8 + padded + 8);
  EXPECT_EQ(static_cast<uint8_t>(content[0]), padded);
  EXPECT_EQ(content.substr(8, padded), header + std::string(padded - header.size(), ' '));
}

// Writing replaces an existing file whole and leaves no temporary file behind.
TEST_F(SafetensorsTest, OverwriteIsAtomic) {
  const std::vector<float> one = {1}, two = {2, 3};
  const SafetensorsWriteEntry first[] = {{"a", DataType::kFloat32, {1}, Bytes(one)}};
  const SafetensorsWriteEntry second[] = {{"b", DataType::kFloat32, {2}, Bytes(two)}};
  ASSERT_TRUE(WriteSafetensors(path_, first).ok());
  ASSERT_TRUE(WriteSafetensors(path_, second).ok());
  StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Find("a"), nullptr);
  EXPECT_NE((*file)->Find("b"), nullptr);
  EXPECT_TRUE((*file)->metadata().empty());
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(folder_)) entries += entry.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1);
}

TEST_F(SafetensorsTest, WriteRejectsBadEntries) {
  const std::vector<float> values = {1, 2};
  auto write_status = [&](SafetensorsWriteEntry entry) {
    const SafetensorsWriteEntry tensors[] = {entry};
    return WriteSafetensors(path_, tensors);
  };
  Status wrong_size = write_status({"w", DataType::kFloat32, {3}, Bytes(values)});
  EXPECT_EQ(wrong_size.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_size.message()), ::testing::HasSubstr("tensor 'w'"));
  EXPECT_THAT(std::string(wrong_size.message()), ::testing::HasSubstr(path_));
  EXPECT_EQ(write_status({"s", DataType::kString, {2}, {}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(write_status({"__metadata__", DataType::kFloat32, {2}, Bytes(values)}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(write_status({"n", DataType::kFloat32, {-2}, Bytes(values)}).code(),
            StatusCode::kInvalidArgument);
  const SafetensorsWriteEntry twice[] = {{"w", DataType::kFloat32, {2}, Bytes(values)},
                                         {"w", DataType::kFloat32, {2}, Bytes(values)}};
  EXPECT_EQ(WriteSafetensors(path_, twice).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(path_));
  const SafetensorsWriteEntry good[] = {{"w", DataType::kFloat32, {2}, Bytes(values)}};
  EXPECT_EQ(WriteSafetensors((folder_ / "no" / "such" / "dir.safetensors").string(), good).code(),
            StatusCode::kNotFound);
}

// The reference reader accepts an empty tensor (a zero dimension, begin == end) and a header with
// surrounding whitespace.
TEST_F(SafetensorsTest, AcceptsEmptyTensorAndPaddedHeader) {
  WriteRaw(R"(  {"a":{"dtype":"F32","shape":[2,0],"data_offsets":[0,0]},)"
           R"("b":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}   )",
           3);
  StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->tensors().size(), 2u);
  EXPECT_EQ((*file)->Find("b")->bytes.size(), 3u);
}

TEST_F(SafetensorsTest, RejectsMissingFile) {
  StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path_ + ".nope");
  EXPECT_FALSE(file.ok());
}

TEST_F(SafetensorsTest, RejectsFileTooSmallForHeader) {
  std::ofstream(path_, std::ios::binary) << "abc";
  ExpectOpenFails(StatusCode::kDataLoss, "too few");
}

// Boundary pair: the length limit itself is accepted (then fails on the file size), one more is
// refused before anything else.
TEST_F(SafetensorsTest, RejectsHeaderOverLimit) {
  WriteRaw("{}", 0, uint64_t{100'000'001});
  ExpectOpenFails(StatusCode::kDataLoss, "exceeds the limit");
  WriteRaw("{}", 0, uint64_t{100'000'000});
  ExpectOpenFails(StatusCode::kDataLoss, "exceeds the file");
}

TEST_F(SafetensorsTest, RejectsHeaderLongerThanFile) {
  WriteRaw("{}", 0, uint64_t{3});
  ExpectOpenFails(StatusCode::kDataLoss, "exceeds the file");
}

TEST_F(SafetensorsTest, RejectsMalformedHeader) {
  WriteRaw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})", 4);
  ExpectOpenFails(StatusCode::kInvalidArgument, "not valid JSON");
  WriteRaw(R"([1, 2])", 0);
  ExpectOpenFails(StatusCode::kInvalidArgument, "not a JSON object");
  WriteRaw("{\"a\xff\":1}", 0);
  ExpectOpenFails(StatusCode::kInvalidArgument, "not valid JSON");
}

TEST_F(SafetensorsTest, RejectsDuplicateKeys) {
  WriteRaw(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
           R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
           2);
  ExpectOpenFails(StatusCode::kInvalidArgument, "'a' twice");
}

TEST_F(SafetensorsTest, RejectsUnknownDtype) {
  WriteRaw(R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", 1);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': unsupported dtype 'F8_E4M3'");
}

TEST_F(SafetensorsTest, RejectsBadTensorEntries) {
  WriteRaw(R"({"a":{"shape":[1],"data_offsets":[0,1]}})", 1);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': missing string 'dtype'");
  WriteRaw(R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': shape has a bad dimension");
  WriteRaw(R"({"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': shape has a bad dimension");
  WriteRaw(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 1);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': missing 'data_offsets'");
  WriteRaw(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,-1]}})", 1);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': bad data_offsets");
  WriteRaw(R"({"a":7})", 0);
  ExpectOpenFails(StatusCode::kInvalidArgument, "tensor 'a': entry is not a JSON object");
}

TEST_F(SafetensorsTest, RejectsNonStringMetadata) {
  WriteRaw(R"({"__metadata__":{"format":1}})", 0);
  ExpectOpenFails(StatusCode::kInvalidArgument, "'format' is not a string");
}

// The byte range must hold exactly shape x dtype bytes.
TEST_F(SafetensorsTest, RejectsSizeMismatch) {
  WriteRaw(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4);
  ExpectOpenFails(StatusCode::kDataLoss, "tensor 'w': float[2] needs 8 bytes");
}

TEST_F(SafetensorsTest, RejectsShapeOverflow) {
  WriteRaw(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8);
  ExpectOpenFails(StatusCode::kDataLoss, "tensor 'w': shape [4294967296,4294967296] overflows");
}

TEST_F(SafetensorsTest, RejectsGap) {
  WriteRaw(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
           R"("b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
           3);
  ExpectOpenFails(StatusCode::kDataLoss, "tensor 'b': data_offsets [2,3] leave a gap");
}

TEST_F(SafetensorsTest, RejectsOverlap) {
  WriteRaw(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
           R"("b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
           3);
  ExpectOpenFails(StatusCode::kDataLoss, "tensor 'b': data_offsets [1,3] overlap");
}

TEST_F(SafetensorsTest, RejectsEndBeforeBegin) {
  WriteRaw(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
           R"("c":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})",
           1);
  ExpectOpenFails(StatusCode::kDataLoss, "tensor 'c': data_offsets [1,0] end before they begin");
}

// Boundary pair: data exactly covering the tensors loads; one byte short or one byte more does not.
TEST_F(SafetensorsTest, RejectsTruncatedOrTrailingData) {
  const std::string header = R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})";
  WriteRaw(header, 8);
  EXPECT_TRUE(SafetensorsFile::Open(path_).ok());
  WriteRaw(header, 7);
  ExpectOpenFails(StatusCode::kDataLoss, "tensor 'a': data_offsets [0,8] run past the data area");
  WriteRaw(header, 9);
  ExpectOpenFails(StatusCode::kDataLoss, "trailing bytes");
}

TEST(SafetensorsDtypeTest, NamesRoundTrip) {
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                         DataType::kInt64, DataType::kBool, DataType::kUint8, DataType::kFloat64}) {
    std::optional<std::string_view> name = SafetensorsDtypeName(dtype);
    ASSERT_TRUE(name.has_value());
    EXPECT_EQ(DataTypeFromSafetensors(*name), dtype);
  }
  EXPECT_EQ(SafetensorsDtypeName(DataType::kFloat32), "F32");
  EXPECT_EQ(SafetensorsDtypeName(DataType::kBFloat16), "BF16");
  EXPECT_FALSE(SafetensorsDtypeName(DataType::kString).has_value());
  EXPECT_FALSE(DataTypeFromSafetensors("F8_E5M2").has_value());
}

}  // namespace
}  // namespace zerograph
