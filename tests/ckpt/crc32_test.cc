#include "ckpt/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <random>
#include <vector>

namespace zerograph {
namespace {

std::vector<std::byte> RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::byte> bytes(size);
  for (std::byte& b : bytes) b = static_cast<std::byte>(random());
  return bytes;
}

uint32_t ZlibCrc(uint32_t crc, std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(
      ::crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// The standard check value: CRC-32 of "123456789".
TEST(Crc32Test, CheckValue) {
  const char* text = "123456789";
  EXPECT_EQ(Crc32(0, std::as_bytes(std::span(text, std::strlen(text)))), 0xcbf43926u);
}

// zlib's value at every length across the folding thresholds (256 bytes, multiples of 16), from
// every alignment, continued from an arbitrary CRC.
TEST(Crc32Test, MatchesZlibAtEveryLengthAndAlignment) {
  const std::vector<std::byte> bytes = RandomBytes(4096, 1);
  std::mt19937 random(2);
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t size = 0; size <= 1100; ++size) {
      const uint32_t start = random();
      const std::span<const std::byte> part = std::span(bytes).subspan(offset, size);
      ASSERT_EQ(Crc32(start, part), ZlibCrc(start, part))
          << "offset " << offset << " size " << size;
    }
  }
}

// Large buffers, where the four lanes fold many times.
TEST(Crc32Test, MatchesZlibOnMegabytes) {
  const std::vector<std::byte> bytes = RandomBytes((size_t{3} << 20) + 77, 3);
  EXPECT_EQ(Crc32(0, bytes), ZlibCrc(0, bytes));
}

// Combining the CRCs of two parts gives the CRC of the whole.
TEST(Crc32Test, CombineJoinsParts) {
  const std::vector<std::byte> bytes = RandomBytes(100000, 4);
  const std::span<const std::byte> all(bytes);
  for (size_t split : {size_t{0}, size_t{1}, size_t{4096}, size_t{99999}, size_t{100000}}) {
    const uint32_t a = Crc32(0, all.first(split));
    const uint32_t b = Crc32(0, all.subspan(split));
    EXPECT_EQ(Crc32Combine(a, b, static_cast<int64_t>(all.size() - split)), Crc32(0, all))
        << "split at " << split;
  }
}

}  // namespace
}  // namespace zerograph
