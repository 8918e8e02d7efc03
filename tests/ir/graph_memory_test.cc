#include "ir/graph_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <thread>
#include <vector>

namespace zerograph {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// Which of the pages of [begin, begin + bytes) are resident.
std::vector<bool> Resident(const std::byte* begin, size_t bytes) {
  std::vector<unsigned char> pages(bytes / kPage);
  EXPECT_EQ(::mincore(const_cast<std::byte*>(begin), bytes, pages.data()), 0);
  std::vector<bool> resident;
  for (unsigned char page : pages) resident.push_back((page & 1) != 0);
  return resident;
}

size_t CountResident(const std::byte* begin, size_t bytes) {
  size_t count = 0;
  for (bool resident : Resident(begin, bytes)) count += resident ? 1 : 0;
  return count;
}

TEST(GraphMemoryTest, BlocksHoldWhatIsWrittenToThem) {
  GraphMemory memory;
  std::pmr::memory_resource& resource = memory;
  struct Request {
    size_t bytes;
    size_t alignment;
  };
  // Small (operator new), large (mapped), and large with more than a page's alignment (new).
  const Request requests[] = {{1000, 8},
                              {GraphMemory::kMappedBlockBytes * 3, 16},
                              {GraphMemory::kMappedBlockBytes, 4 * kPage}};
  for (const Request& request : requests) {
    auto* block = static_cast<std::byte*>(resource.allocate(request.bytes, request.alignment));
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % request.alignment, 0u);
    for (size_t i = 0; i < request.bytes; ++i) block[i] = static_cast<std::byte>(i * 7);
    for (size_t i = 0; i < request.bytes; i += 4093) {
      ASSERT_EQ(block[i], static_cast<std::byte>(i * 7)) << request.bytes << " bytes, at " << i;
    }
    resource.deallocate(block, request.bytes, request.alignment);
  }
  // As the graph uses it: a region growing over blocks of both kinds.
  std::pmr::monotonic_buffer_resource region(&memory);
  std::pmr::vector<int64_t> values(&region);
  for (int64_t i = 0; i < 2'000'000; ++i) values.push_back(i);
  for (int64_t i = 0; i < 2'000'000; i += 999) ASSERT_EQ(values[static_cast<size_t>(i)], i);
}

TEST(GraphMemoryTest, WarmsTheNewestBlockAWindowAheadOfTheWriter) {
  const size_t window = 64 * kPage;
  GraphMemory memory(window);
  memory.StopWarming();  // none runs: nothing to stop
  std::pmr::memory_resource& resource = memory;
  const size_t bytes = 1024 * kPage;
  auto* block = static_cast<std::byte*>(resource.allocate(bytes, alignof(std::max_align_t)));
  // Pages of the base size, so that residency shows the window (where transparent huge pages are
  // on for every mapping, a populated page would be 2 MiB).
  ASSERT_EQ(::madvise(block, bytes, MADV_NOHUGEPAGE), 0);
  ASSERT_EQ(CountResident(block, bytes), 0u) << "a fresh mapping has no pages yet";
  if (!memory.StartWarming()) {
    resource.deallocate(block, bytes, alignof(std::max_align_t));
    GTEST_SKIP() << "this kernel cannot populate pages (MADV_POPULATE_WRITE, Linux 5.14)";
  }
  const size_t writer = 256 * kPage;
  memory.WriterAt(block + writer);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (CountResident(block + writer, window) < window / kPage &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  memory.StopWarming();
  memory.StopWarming();  // a second stop is harmless

  EXPECT_EQ(CountResident(block + writer, window), window / kPage)
      << "the window after the writer is faulted in";
  EXPECT_EQ(CountResident(block, writer), 0u) << "nothing behind the writer";
  EXPECT_EQ(CountResident(block + writer + window, bytes - writer - window), 0u)
      << "nothing beyond the window";
  // The pages were faulted in, not written: they read as zeros.
  for (size_t i = 0; i < window; ++i) ASSERT_EQ(block[writer + i], std::byte{0}) << i;
  resource.deallocate(block, bytes, alignof(std::max_align_t));
}

}  // namespace
}  // namespace zerograph
