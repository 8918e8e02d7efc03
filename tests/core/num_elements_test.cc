#include "zerograph/core/num_elements.h"

#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

TEST(NumElementsTest, CountsElements) {
  EXPECT_EQ(NumElements(std::vector<int64_t>{}), 1);
  EXPECT_EQ(NumElements(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(NumElements(std::vector<int64_t>{2, 0}), 0);
  EXPECT_EQ(*CheckedNumElements(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(*CheckedNumElements(std::vector<int64_t>{}), 1);
}

// The largest product int64 holds is accepted; one that does not fit is refused.
TEST(NumElementsTest, AcceptsProductAtInt64Max) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(*CheckedNumElements(std::vector<int64_t>{kMax, 1}), kMax);
}

TEST(NumElementsTest, RefusesOverflow) {
  const std::vector<int64_t> shape = {int64_t{1} << 32, int64_t{1} << 31};
  StatusOr<int64_t> n = CheckedNumElements(shape);
  EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(n.status().message().find("more elements than int64"), std::string_view::npos);
}

// A zero dimension empties the tensor, even beside dimensions whose product alone would overflow.
TEST(NumElementsTest, ZeroDimensionBeatsOverflow) {
  EXPECT_EQ(*CheckedNumElements(std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40, 0}), 0);
}

TEST(NumElementsTest, RefusesNegativeDimension) {
  EXPECT_EQ(CheckedNumElements(std::vector<int64_t>{2, -1}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zerograph
