#include "ckpt/checksummed_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ckpt/crc32.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

class ChecksummedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() /
             StrCat("zg_checksummed_file_test_", ::getpid(), "_",
                    ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
    std::mt19937 random(7);
    bytes_.resize((size_t{3} << 20) + 123);  // several read blocks, not a multiple of one
    for (std::byte& b : bytes_) b = static_cast<std::byte>(random());
    WriteFile();
  }
  void TearDown() override { fs::remove(path_); }

  void WriteFile() {
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()),
               static_cast<std::streamsize>(bytes_.size()));
  }
  std::unique_ptr<ChecksummedFile> Open(
      ChecksummedFile::Reads reads = ChecksummedFile::Reads::kAny) {
    StatusOr<std::unique_ptr<ChecksummedFile>> file = ChecksummedFile::Open(path_, reads);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return file.ok() ? std::move(*file) : nullptr;
  }
  // Reads [begin, end) and checks the bytes.
  void Read(ChecksummedFile& file, int64_t begin, int64_t end) {
    std::vector<std::byte> out(static_cast<size_t>(end - begin));
    ASSERT_TRUE(file.ReadAt(begin, out).ok());
    ASSERT_TRUE(std::equal(out.begin(), out.end(), bytes_.begin() + begin)) << begin;
  }

  std::string path_;
  std::vector<std::byte> bytes_;
};

// Ranges read in shuffled order, with gaps between some, give the whole file's CRC-32.
TEST_F(ChecksummedFileTest, ReadsInAnyOrderGiveTheWholeChecksum) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  const int64_t size = static_cast<int64_t>(bytes_.size());
  for (int64_t at = 100; at < size; at += 70001) {
    ranges.push_back({at, std::min(size, at + 70001 - (at % 3 == 0 ? 500 : 0))});
  }
  std::shuffle(ranges.begin(), ranges.end(), std::mt19937(1));
  std::unique_ptr<ChecksummedFile> file = Open(ChecksummedFile::Reads::kOnce);
  for (auto [begin, end] : ranges) Read(*file, begin, end);
  StatusOr<uint32_t> crc = file->Checksum();
  ASSERT_TRUE(crc.ok()) << crc.status().ToString();
  EXPECT_EQ(*crc, Crc32(0, bytes_));
}

// Overlapping reads cannot be combined; the checksum is still the whole file's.
TEST_F(ChecksummedFileTest, OverlappingReadsGiveTheWholeChecksum) {
  std::unique_ptr<ChecksummedFile> file = Open();
  Read(*file, 0, 5000);
  Read(*file, 4000, 9000);
  StatusOr<uint32_t> crc = file->Checksum();
  ASSERT_TRUE(crc.ok());
  EXPECT_EQ(*crc, Crc32(0, bytes_));
}

// A byte changed where no read went still changes the checksum: the gaps are read for it.
TEST_F(ChecksummedFileTest, ChangeInAnUnreadGapChangesTheChecksum) {
  const uint32_t original = Crc32(0, bytes_);
  bytes_[2'000'000] ^= std::byte{1};
  WriteFile();
  std::unique_ptr<ChecksummedFile> file = Open();
  Read(*file, 0, 1'000'000);
  Read(*file, 2'500'000, static_cast<int64_t>(bytes_.size()));
  StatusOr<uint32_t> crc = file->Checksum();
  ASSERT_TRUE(crc.ok());
  EXPECT_NE(*crc, original);
  EXPECT_EQ(*crc, Crc32(0, bytes_));
}

// Reads after the checksum still return the bytes.
TEST_F(ChecksummedFileTest, ReadsAfterTheChecksum) {
  std::unique_ptr<ChecksummedFile> file = Open();
  ASSERT_TRUE(file->Checksum().ok());
  Read(*file, 10, 20000);
  StatusOr<uint32_t> crc = file->Checksum();
  ASSERT_TRUE(crc.ok());
  EXPECT_EQ(*crc, Crc32(0, bytes_));
}

// A read past the end is data loss naming the file.
TEST_F(ChecksummedFileTest, RefusesReadPastTheEnd) {
  std::unique_ptr<ChecksummedFile> file = Open();
  std::vector<std::byte> out(200);
  Status status = file->ReadAt(static_cast<int64_t>(bytes_.size()) - 100, out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(path_));
}

// A missing file is NotFound.
TEST_F(ChecksummedFileTest, RefusesMissingFile) {
  StatusOr<std::unique_ptr<ChecksummedFile>> file =
      ChecksummedFile::Open(path_ + ".missing", ChecksummedFile::Reads::kAny);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace zerograph
