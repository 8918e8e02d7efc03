#include "core/write_funnel.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/core/atomic_file.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

class WriteFunnelTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("write_funnel_test." + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "out.bin").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
};

// A byte no two pieces share at the same place, and never zero (zero pages become holes).
std::byte ByteAt(size_t position) { return static_cast<std::byte>(1 + position % 251); }

// `threads` threads write `pieces` pieces each at once, interleaved, each piece made in a buffer
// the thread reuses at once, as a serializer does; every byte must land where it was written.
void WriteAtOnceAndCheck(const std::string& path, size_t threads, size_t pieces,
                         size_t piece_bytes) {
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  WriteFunnel funnel(**file);
  std::vector<std::thread> writers;
  std::vector<Status> errors(threads);
  for (size_t t = 0; t < threads; ++t) {
    writers.emplace_back([&, t] {
      std::vector<std::byte> piece(piece_bytes);
      for (size_t p = 0; p < pieces; ++p) {
        const uint64_t offset = (p * threads + t) * piece_bytes;
        for (size_t i = 0; i < piece_bytes; ++i) piece[i] = ByteAt(offset + i);
        if (Status written = funnel.WriteAt(piece, offset); !written.ok()) errors[t] = written;
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  for (const Status& error : errors) EXPECT_TRUE(error.ok()) << error.ToString();
  ASSERT_TRUE(funnel.Finish().ok());
  ASSERT_TRUE((*file)->Commit().ok());

  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), threads * pieces * piece_bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    ASSERT_EQ(static_cast<std::byte>(bytes[i]), ByteAt(i)) << "at byte " << i;
  }
}

// Small pieces, so that most threads find another writing and leave their bytes to it. Not a
// page multiple: pieces share pages.
TEST_F(WriteFunnelTest, EveryPieceLandsAtItsOffsetWhenThreadsWriteAtOnce) {
  WriteAtOnceAndCheck(path_, 4, 200, 3000);
}

// Pieces larger than the copies may take: their threads wait for the writer and write them.
TEST_F(WriteFunnelTest, PiecesTooLargeToCopyLandAtTheirOffsets) {
  WriteAtOnceAndCheck(path_, 3, 3, WriteFunnel::kMaxLeftBytes + 1000);
}

// A write that fails is reported, by WriteAt when its own thread made it, otherwise by Finish.
TEST_F(WriteFunnelTest, AFailedWriteIsReportedByWriteAtOrFinish) {
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Sync().ok());  // closes the file: every write fails from here
  WriteFunnel funnel(**file);
  constexpr size_t kThreads = 4;
  std::vector<size_t> accepted(kThreads, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<std::byte> piece(100, std::byte{7});
      for (size_t p = 0; p < 100; ++p) {
        Status written = funnel.WriteAt(piece, (p * kThreads + t) * piece.size());
        if (written.ok()) {
          ++accepted[t];
        } else {
          EXPECT_NE(written.message().find("cannot write"), std::string::npos)
              << written.ToString();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const Status finished = funnel.Finish();
  size_t accepted_in_all = 0;
  for (size_t count : accepted) accepted_in_all += count;
  // Every WriteAt that returned OK left its bytes to another thread, whose write failed.
  if (accepted_in_all > 0) {
    ASSERT_FALSE(finished.ok());
    EXPECT_NE(finished.message().find("cannot write"), std::string::npos) << finished.ToString();
  }
  EXPECT_LT(accepted_in_all, kThreads * 100) << "some thread writes itself, and fails";
}

// One thread alone writes at once: nothing is left for Finish.
TEST_F(WriteFunnelTest, OneThreadWritesEachPieceItself) {
  StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Sync().ok());
  WriteFunnel funnel(**file);
  const std::vector<std::byte> piece(10, std::byte{7});
  EXPECT_FALSE(funnel.WriteAt(piece, 0).ok());
  EXPECT_TRUE(funnel.Finish().ok());
}

}  // namespace
}  // namespace zerograph
