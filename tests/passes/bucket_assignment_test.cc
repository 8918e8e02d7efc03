#include "zerograph/passes/bucket_assignment.h"

#include <gtest/gtest.h>

namespace zerograph {
namespace {

using Buckets = std::vector<std::vector<size_t>>;

// Two items that together stay under the limit share a bucket.
TEST(BucketAssignmentTest, CombineUnderThreshold) {
  std::vector<BucketItem> items = {{0, 100}, {0, 155}};
  EXPECT_EQ(AssignBuckets(items, 256), (Buckets{{0, 1}}));
}

// Reaching the limit exactly closes the bucket; the next item opens a new one.
TEST(BucketAssignmentTest, CloseAtThreshold) {
  std::vector<BucketItem> items = {{0, 100}, {0, 156}, {0, 4}};
  EXPECT_EQ(AssignBuckets(items, 256), (Buckets{{0, 1}, {2}}));
}

// One byte under the limit keeps the bucket open, so the next item joins even though it crosses
// the limit (the item that crosses stays, as in the seed).
TEST(BucketAssignmentTest, CrossingItemStays) {
  std::vector<BucketItem> items = {{0, 100}, {0, 155}, {0, 400}, {0, 4}};
  EXPECT_EQ(AssignBuckets(items, 256), (Buckets{{0, 1, 2}, {3}}));
}

// An item larger than the limit gets a bucket of its own.
TEST(BucketAssignmentTest, OversizedItemAlone) {
  std::vector<BucketItem> items = {{0, 1000}, {0, 8}};
  EXPECT_EQ(AssignBuckets(items, 256), (Buckets{{0}, {1}}));
}

// Different keys (dtypes, optimizers) never share a bucket; buckets sort by their first item.
TEST(BucketAssignmentTest, KeysSeparate) {
  std::vector<BucketItem> items = {{0, 10}, {1, 10}, {0, 10}, {1, 300}, {1, 10}};
  EXPECT_EQ(AssignBuckets(items, 256), (Buckets{{0, 2}, {1, 3}, {4}}));
}

}  // namespace
}  // namespace zerograph
