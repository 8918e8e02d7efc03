#ifndef ZEROGRAPH_SRC_RUNTIME_CUDA_CACHING_ALLOCATOR_H_
#define ZEROGRAPH_SRC_RUNTIME_CUDA_CACHING_ALLOCATOR_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph::runtime {

// Device memory of one GPU, kept for reuse: cudaMalloc and cudaFree synchronize the device and
// cost tens of microseconds, so a freed block goes back to a cache keyed by its size class and
// the next allocation of that class takes it.
//
// Streams: a block freed while work queued on a stream may still read or write it is reused only
// once that work is done. Device::Allocate takes no stream, so the allocator does not know which
// streams touched a block; Free records an event on every live stream of the device and the block
// waits in `pending_` until all of them have completed (cudaEventQuery, never blocking). On the
// executor's plan, allocated once before step 1, this costs nothing per step.
class CachingAllocator {
 public:
  explicit CachingAllocator(int ordinal) : ordinal_(ordinal) {}
  // Frees every cached block; the caller has synchronized the device.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of RoundUp(bytes) bytes, 256-byte aligned (cudaMalloc's alignment). On cudaMalloc
  // running out of memory, waits for pending blocks, returns the cache to CUDA and tries again.
  StatusOr<void*> Allocate(size_t bytes);
  // Returns a block of RoundUp(bytes) bytes that work on `streams` may still use.
  void Free(void* block, size_t bytes, std::span<const cudaStream_t> streams);

  // Bytes held in blocks that are free or pending reuse.
  size_t cached_bytes() const;

  // The size class of a request: 512-byte steps up to 4 KiB, then four classes per power of two
  // (at most 25% rounding) up to 64 MiB, then 2 MiB steps (large buffers: parameters, fused
  // gradients) so a 10 GiB buffer wastes at most 2 MiB.
  static size_t RoundUp(size_t bytes);

 private:
  struct Pending {
    void* block;
    size_t bytes;
    std::vector<cudaEvent_t> events;
  };

  // Moves pending blocks whose events completed to the free lists. Holds `mutex_`.
  void CollectCompleted();
  // Waits for every pending block, then cudaFree's every free one. Holds `mutex_`.
  void ReleaseCache();
  // An event from the spares, or a new one; null when CUDA cannot make one.
  cudaEvent_t TakeEvent();
  std::string Where() const;

  int ordinal_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // by size class
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> spare_events_;
  size_t cached_bytes_ = 0;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_CUDA_CACHING_ALLOCATOR_H_
