#include "zerograph/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
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

// A range larger than one write hands the kernel (a few MB, as a large node's serialized names
// are) is written in pieces, each where it belongs: every byte differs from its neighbours' pieces.
TEST_F(AtomicFileTest, WritesARangeLargerThanOneWriteWhole) {
  std::string bytes(3 * 1024 * 1024 + 123, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(1 + i % 251);
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path_);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(
      (*file)->WriteAt(std::as_bytes(std::span(bytes.data() + 7, bytes.size() - 7)), 7).ok());
  ASSERT_TRUE((*file)->WriteAt(std::as_bytes(std::span(bytes.data(), 7)), 0).ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(Read(path_), bytes);
}

// Whether the test folder's file system stores a file extended past its data as a hole.
bool FolderKeepsHoles(const fs::path& dir) {
  const std::string probe = (dir / "hole-probe").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) return false;
  struct stat status {};
  const bool holes = ::ftruncate(fd, 1 << 20) == 0 && ::fsync(fd) == 0 &&
                     ::fstat(fd, &status) == 0 && status.st_blocks == 0;
  ::close(fd);
  fs::remove(probe);
  return holes;
}

// Whole pages of zeros are not written, yet read back as zeros: a hole inside the file, one at its
// end (the file is sized over it), and pages with a single byte set, first or last, written.
TEST_F(AtomicFileTest, LeavesZeroPagesAsHoles) {
  constexpr size_t kPage = 4096;
  std::string bytes(24 * kPage, '\0');
  bytes[0] = 'a';                      // page 0; 1..7 zeros, a hole
  bytes[8 * kPage + kPage / 2] = 'b';  // page 8, in its middle
  bytes[10 * kPage - 1] = 'c';         // page 9, its last byte; 10 and 11 a hole
  bytes[12 * kPage] = 'd';             // page 12; 13..23 zeros, a hole at the end
  // Written from an offset off the page grid: its first and last partial pages are written.
  const std::string written = bytes.substr(100);
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path_);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->WriteAt(std::as_bytes(std::span(bytes.data(), 100)), 0).ok());
  ASSERT_TRUE((*file)->WriteAt(std::as_bytes(std::span(written)), 100).ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(Read(path_), bytes);

  if (!FolderKeepsHoles(dir_)) {
    GTEST_SKIP() << "the file system under " << dir_ << " keeps no holes; the bytes were checked";
  }
  struct stat status {};
  ASSERT_EQ(::stat(path_.c_str(), &status), 0);
  // Pages 0, 8, 9 and 12 hold data; the 20 others are holes.
  EXPECT_LE(static_cast<size_t>(status.st_blocks) * 512, 4 * kPage);
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
