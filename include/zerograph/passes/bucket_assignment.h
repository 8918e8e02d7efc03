#ifndef ZEROGRAPH_PASSES_BUCKET_ASSIGNMENT_H_
#define ZEROGRAPH_PASSES_BUCKET_ASSIGNMENT_H_

#include <cstdint>
#include <span>
#include <vector>

namespace zerograph {

// One tensor to place in a bucket. Only tensors with equal keys may share a bucket (the key stands
// for everything that must match: dtype, optimizer and its hyperparameters).
struct BucketItem {
  int64_t key;
  int64_t bytes;
};

// Groups items, taken in the given order, into buckets of at most `limit_bytes` each (the seed's
// rule, Paddle's AssignGroupBySize): one open bucket per key; an item joins its key's open bucket,
// and the bucket closes once its unpadded bytes reach the limit, so the item that crosses the limit
// stays and a bucket exceeds the limit by less than one item. Returns item indices per bucket,
// buckets sorted by their first item.
std::vector<std::vector<size_t>> AssignBuckets(std::span<const BucketItem> items,
                                               int64_t limit_bytes);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_BUCKET_ASSIGNMENT_H_
