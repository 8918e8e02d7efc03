#include "zerograph/passes/bucket_assignment.h"

#include <algorithm>
#include <unordered_map>

namespace zerograph {

std::vector<std::vector<size_t>> AssignBuckets(std::span<const BucketItem> items,
                                               int64_t limit_bytes) {
  struct OpenBucket {
    std::vector<size_t> items;
    int64_t bytes = 0;
  };
  std::vector<std::vector<size_t>> closed;
  std::unordered_map<int64_t, OpenBucket> open;
  for (size_t i = 0; i < items.size(); ++i) {
    OpenBucket& bucket = open[items[i].key];
    bucket.items.push_back(i);
    bucket.bytes += items[i].bytes;
    if (bucket.bytes >= limit_bytes) {
      closed.push_back(std::move(bucket.items));
      open.erase(items[i].key);
    }
  }
  for (auto& [key, bucket] : open) closed.push_back(std::move(bucket.items));
  std::sort(closed.begin(), closed.end(),
            [](const std::vector<size_t>& a, const std::vector<size_t>& b) {
              return a.front() < b.front();
            });
  return closed;
}

}  // namespace zerograph
