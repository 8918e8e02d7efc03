#include "runtime/cuda/caching_allocator.h"

#include <algorithm>
#include <bit>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {
namespace {

constexpr size_t kSmallStep = 512;
constexpr size_t kSmallLimit = size_t{4} << 10;
constexpr size_t kLargeStep = size_t{2} << 20;
constexpr size_t kLargeLimit = size_t{64} << 20;

size_t RoundUpTo(size_t bytes, size_t step) { return (bytes + step - 1) / step * step; }

}  // namespace

size_t CachingAllocator::RoundUp(size_t bytes) {
  if (bytes <= kSmallLimit) return std::max(kSmallStep, RoundUpTo(bytes, kSmallStep));
  if (bytes > kLargeLimit) return RoundUpTo(bytes, kLargeStep);
  // 2^k < bytes <= 2^(k+1): steps of 2^k / 4.
  const size_t power = size_t{1} << (std::bit_width(bytes - 1) - 1);
  return RoundUpTo(bytes, power / 4);
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCache();
  for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
}

std::string CachingAllocator::Where() const { return StrCat("cuda:", ordinal_); }

size_t CachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

StatusOr<void*> CachingAllocator::Allocate(size_t bytes) {
  const size_t size = RoundUp(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  CollectCompleted();
  if (auto it = free_.find(size); it != free_.end()) {
    void* block = it->second;
    free_.erase(it);
    cached_bytes_ -= size;
    return block;
  }
  void* block = nullptr;
  cudaError_t result = cudaMalloc(&block, size);
  if (result == cudaErrorMemoryAllocation && cached_bytes_ > 0) {
    cudaGetLastError();  // out of memory is not sticky: clear it and retry with the cache freed
    ReleaseCache();
    result = cudaMalloc(&block, size);
  }
  if (result != cudaSuccess) {
    cudaGetLastError();
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaGetLastError();
    return UnavailableError(StrCat(Where(), ": cudaMalloc of ", size, " bytes (", bytes,
                                   " asked) failed: ", cudaGetErrorString(result), " (", free_bytes,
                                   " of ", total_bytes, " bytes free on the GPU)"));
  }
  return block;
}

void CachingAllocator::Free(void* block, size_t bytes, std::span<const cudaStream_t> streams) {
  const size_t size = RoundUp(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  Pending pending{block, size, {}};
  for (cudaStream_t stream : streams) {
    cudaEvent_t event = TakeEvent();
    if (event != nullptr && cudaEventRecord(event, stream) == cudaSuccess) {
      pending.events.push_back(event);
      continue;
    }
    // No event to wait on (the context is failing): wait for the stream itself instead.
    cudaGetLastError();
    if (event != nullptr) spare_events_.push_back(event);
    cudaStreamSynchronize(stream);
    cudaGetLastError();
  }
  cached_bytes_ += size;
  if (pending.events.empty()) {
    free_.emplace(size, block);
  } else {
    pending_.push_back(std::move(pending));
  }
}

void CachingAllocator::CollectCompleted() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    const bool done = std::all_of(it->events.begin(), it->events.end(), [](cudaEvent_t event) {
      // An error other than "not ready" means the context failed: nothing runs on it any more.
      const cudaError_t result = cudaEventQuery(event);
      if (result != cudaSuccess && result != cudaErrorNotReady) cudaGetLastError();
      return result != cudaErrorNotReady;
    });
    if (!done) {
      ++it;
      continue;
    }
    spare_events_.insert(spare_events_.end(), it->events.begin(), it->events.end());
    free_.emplace(it->bytes, it->block);
    it = pending_.erase(it);
  }
}

void CachingAllocator::ReleaseCache() {
  for (Pending& pending : pending_) {
    for (cudaEvent_t event : pending.events) {
      cudaEventSynchronize(event);
      spare_events_.push_back(event);
    }
    free_.emplace(pending.bytes, pending.block);
  }
  pending_.clear();
  for (const auto& [size, block] : free_) cudaFree(block);
  free_.clear();
  cached_bytes_ = 0;
  cudaGetLastError();
}

cudaEvent_t CachingAllocator::TakeEvent() {
  if (!spare_events_.empty()) {
    cudaEvent_t event = spare_events_.back();
    spare_events_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) return nullptr;
  return event;
}

}  // namespace zerograph::runtime
