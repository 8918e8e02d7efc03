#include "zerograph/core/mapped_file.h"

#include <unistd.h>

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
