#ifndef ZEROGRAPH_SRC_RUNTIME_CUDA_PINNED_STAGING_H_
#define ZEROGRAPH_SRC_RUNTIME_CUDA_PINNED_STAGING_H_

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph::runtime {

// Page-locked host buffers through which pageable host memory is copied in a stream's order.
// cudaMemcpyAsync from or to pageable memory waits for the copy on the host (the driver stages it
// itself); through a pinned buffer the host goes on: an upload copies the bytes into the buffer at
// once and enqueues the DMA; a download enqueues the DMA and a host function that copies the
// buffer out when the stream gets there. A buffer returns to the pool from a host function
// enqueued after its last use, so it is never reused early.
class PinnedStaging {
 public:
  // Larger copies do not go through staging (the caller copies synchronously instead), so the
  // pool stays small.
  static constexpr size_t kMaxBytes = size_t{16} << 20;

  PinnedStaging() = default;
  // Frees the buffers; the caller has synchronized the device.
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Copies `bytes` (at most kMaxBytes) from pageable `host` to `device` in `stream`'s order.
  // `where` names the device for messages.
  Status Upload(const void* host, void* device, size_t bytes, cudaStream_t stream,
                std::string_view where);
  // The other way; `host` must stay valid until the stream reaches the copy.
  Status Download(const void* device, void* host, size_t bytes, cudaStream_t stream,
                  std::string_view where);

 private:
  struct Slot {
    void* data = nullptr;
    size_t bytes = 0;
    std::atomic<bool> busy{false};
  };

  // A free slot of at least `bytes`, marked busy; a new one when none is free.
  StatusOr<Slot*> Acquire(size_t bytes, std::string_view where);
  // Enqueues `slot`'s release (and, for a download, the copy out to `host`) on `stream`; waits
  // for the stream instead when the host function cannot be enqueued.
  Status ReleaseAfter(Slot* slot, void* host, size_t bytes, cudaStream_t stream,
                      std::string_view where);

  std::mutex mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_CUDA_PINNED_STAGING_H_
