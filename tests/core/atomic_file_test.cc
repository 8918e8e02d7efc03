#include "zerograph/core/atomic_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("atomic_file_test." + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "out.bin").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The names in the folder: the target, and no temporary beside it.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(AtomicFileTest, WritesAndReplaces) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path_, "new bytes").ok());
  EXPECT_EQ(Read(path_), "new bytes");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
}

// Nothing is visible before Commit.
TEST_F(AtomicFileTest, InvisibleUntilCommit) {
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Append(std::string_view("abc")).ok());
  EXPECT_FALSE(fs::exists(path_));
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(Read(path_), "abc");
}

// A writer that fails before Commit leaves the old file as it was and no temporary behind.
TEST_F(AtomicFileTest, FailedWriteLeavesOldFileAndNoTemporary) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old").ok());
  auto write = [&]() -> Status {
    ZG_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path_));
    ZG_RETURN_IF_ERROR(file->Append(std::string_view("partial")));
    return UnavailableError("the source failed");
  };
  EXPECT_EQ(write().code(), StatusCode::kUnavailable);
  EXPECT_EQ(Read(path_), "old");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
}

// Ranges written at offsets from several threads, then sized past the last one.
TEST_F(AtomicFileTest, WritesAtOffsetsFromThreads) {
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path_);
  ASSERT_TRUE(file.ok());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      const std::string text(1, static_cast<char>('a' + i));
      EXPECT_TRUE((*file)->WriteAt(std::as_bytes(std::span(text)), i).ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE((*file)->Truncate(6).ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(Read(path_), std::string("abcd\0\0", 6));
}

TEST_F(AtomicFileTest, MissingFolderIsNotFound) {
  EXPECT_EQ(WriteFileAtomically((dir_ / "no" / "out.bin").string(), "x").code(),
            StatusCode::kNotFound);
}

// A folder written in full appears under its final name at once.
TEST_F(AtomicFileTest, RenamesFolder) {
  const fs::path temp = dir_ / ".tmp-folder", final_dir = dir_ / "folder";
  fs::create_directory(temp);
  ASSERT_TRUE(WriteFileAtomically((temp / "a").string(), "a").ok());
  ASSERT_TRUE(RenameFolder(temp.string(), final_dir.string()).ok());
  EXPECT_EQ(Read((final_dir / "a").string()), "a");
  EXPECT_FALSE(fs::exists(temp));
}

}  // namespace
}  // namespace zerograph
