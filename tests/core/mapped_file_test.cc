#include "zerograph/core/mapped_file.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

namespace fs = std::filesystem;

class MappedFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("mapped_file_test." + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  fs::path dir_;
};

TEST_F(MappedFileTest, MapsWholeFile) {
  const std::string path = Write("a.bin", "hello");
  for (MappedFile::Pages pages : {MappedFile::Pages::kOnFirstTouch, MappedFile::Pages::kUpFront}) {
    StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path, pages);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    const std::span<const std::byte> bytes = (*file)->bytes();
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "hello");
    EXPECT_EQ((*file)->path(), path);
  }
}

// The file's resident pages, in KiB (Linux's RssFile), or -1 where it is not reported.
long ResidentFileKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("RssFile:")) return std::stol(line.substr(8));
  }
  return -1;
}

// Evicting drops the pages wholly inside the range, and the bytes read the same afterwards.
TEST_F(MappedFileTest, EvictDropsPagesButKeepsTheBytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::string content(size_t{32} << 20, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + i / 4093);
  const std::string path = Write("big.bin", content);
  StatusOr<std::shared_ptr<const MappedFile>> file =
      MappedFile::Open(path, MappedFile::Pages::kUpFront);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::span<const std::byte> bytes = (*file)->bytes();

  const long before = ResidentFileKib();
  // From mid-page to mid-page: the pages at either end hold bytes outside the range, and stay.
  (*file)->Evict(bytes.subspan(page / 2, bytes.size() - page));
  const long after = ResidentFileKib();
  if (before >= 0) {
    EXPECT_GE(before - after, static_cast<long>((content.size() - 2 * page) >> 10) * 9 / 10)
        << "RssFile " << before << " KiB before, " << after << " KiB after";
  }
  // A range that is not the file's, or spans no whole page, is left alone.
  (*file)->Evict(std::span<const std::byte>(bytes.data() + bytes.size() - 10, 20));
  (*file)->Evict(bytes.subspan(1, page - 2));
  EXPECT_TRUE(std::memcmp(bytes.data(), content.data(), content.size()) == 0);
}

// mmap refuses a length of 0; an empty file still opens, as an empty span.
TEST_F(MappedFileTest, MapsEmptyFile) {
  StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(Write("empty.bin", ""));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_TRUE((*file)->bytes().empty());
}

TEST_F(MappedFileTest, MissingFileIsNotFound) {
  Status status = MappedFile::Open((dir_ / "missing.bin").string()).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("missing.bin"), std::string_view::npos);
}

TEST_F(MappedFileTest, FolderIsInvalidArgument) {
  EXPECT_EQ(MappedFile::Open(dir_.string()).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zerograph
