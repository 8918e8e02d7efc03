#include "runtime/cuda/caching_allocator.h"

#include <gtest/gtest.h>

namespace zerograph::runtime {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// Size classes in pairs across each boundary: 512-byte steps to 4 KiB, quarter powers of two to
// 64 MiB, then 2 MiB steps. Pure arithmetic: runs without a GPU.
TEST(CachingAllocatorTest, SizeClasses) {
  EXPECT_EQ(CachingAllocator::RoundUp(0), 512u);
  EXPECT_EQ(CachingAllocator::RoundUp(1), 512u);
  EXPECT_EQ(CachingAllocator::RoundUp(512), 512u);
  EXPECT_EQ(CachingAllocator::RoundUp(513), 1024u);
  EXPECT_EQ(CachingAllocator::RoundUp(4 * kKiB), 4 * kKiB);
  EXPECT_EQ(CachingAllocator::RoundUp(4 * kKiB + 1), 5 * kKiB);
  EXPECT_EQ(CachingAllocator::RoundUp(3 * kMiB), 3 * kMiB);
  EXPECT_EQ(CachingAllocator::RoundUp(3 * kMiB + 1), 3 * kMiB + 512 * kKiB);
  EXPECT_EQ(CachingAllocator::RoundUp(64 * kMiB), 64 * kMiB);
  EXPECT_EQ(CachingAllocator::RoundUp(64 * kMiB + 1), 66 * kMiB);
  EXPECT_EQ(CachingAllocator::RoundUp(10 * 1024 * kMiB + 1), 10 * 1024 * kMiB + 2 * kMiB);
}

// Rounding wastes at most a quarter of a request in the middle range.
TEST(CachingAllocatorTest, RoundingWastesAtMostAQuarter) {
  for (size_t bytes = 4 * kKiB + 1; bytes <= 64 * kMiB; bytes = bytes * 5 / 4 + 13) {
    const size_t rounded = CachingAllocator::RoundUp(bytes);
    EXPECT_GE(rounded, bytes);
    EXPECT_LE(rounded - bytes, bytes / 4) << bytes;
  }
}

}  // namespace
}  // namespace zerograph::runtime
