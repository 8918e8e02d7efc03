#ifndef ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_DEVICE_H_
#define ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_DEVICE_H_

#include <cuda_runtime.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/pinned_staging.h"
#include "zerograph/runtime/device.h"

namespace zerograph::runtime {

// One GPU. Buffers come from a CachingAllocator; synchronous copies run on a private stream and
// wait for it (cudaMemcpy from pageable memory may return before the DMA lands, and the legacy
// default stream it uses is not ordered with our non-blocking streams); copies in a stream's
// order go straight to pinned memory or through PinnedStaging.
//
// Waiting for the GPU (a stream, an event) blocks in CUDA unless a watchdog is registered (the
// NCCL communicator registers one): then the wait polls, runs the watchdog's check and gives up
// after its timeout, so a collective that will never finish becomes an error instead of a hang.
class CudaDevice final : public Device {
 public:
  static StatusOr<std::unique_ptr<CudaDevice>> Create(int ordinal);
  ~CudaDevice() override;

  bool host_accessible() const override { return false; }

  // Makes this GPU current on the calling thread.
  Status MakeCurrent() const;

  // Runs while the host waits for the GPU: `check` returns an error that ends the wait (NCCL's
  // asynchronous error); `timeout` bounds every wait. Returns an id for RemoveWatchdog.
  struct Watchdog {
    std::function<Status()> check;
    std::chrono::seconds timeout;
  };
  int AddWatchdog(Watchdog watchdog);
  void RemoveWatchdog(int id);

  // Waits until `query` stops returning cudaErrorNotReady: with `block` (a blocking CUDA wait)
  // when no watchdog is registered, else by polling. `what` names what is waited for.
  Status WaitFor(const std::function<cudaError_t()>& query,
                 const std::function<cudaError_t()>& block, std::string_view what);

  // Streams register themselves: a freed buffer is reused only after every one of them has
  // passed the point where it was freed.
  void AddStream(cudaStream_t stream);
  void RemoveStream(cudaStream_t stream);
  // Called by a buffer's destructor.
  void FreeBlock(void* block, size_t bytes);

 protected:
  StatusOr<std::unique_ptr<Buffer>> AllocateImpl(size_t bytes) override;
  StatusOr<std::unique_ptr<Stream>> CreateStreamImpl(std::string_view name) override;
  StatusOr<std::unique_ptr<Event>> CreateEventImpl() override;
  Status CopyFromHostImpl(const void* host, void* device_ptr, size_t bytes) override;
  Status CopyToHostImpl(const void* device_ptr, void* host, size_t bytes) override;
  Status CopyFromHostAsyncImpl(const void* host, void* device_ptr, size_t bytes,
                               Stream& stream) override;
  Status CopyToHostAsyncImpl(const void* device_ptr, void* host, size_t bytes,
                             Stream& stream) override;
  Status CopyAsyncImpl(const void* src, void* dst, size_t bytes, Stream& stream) override;
  // Events with timing on the device's streams (cuda_timeline.cc).
  StatusOr<std::unique_ptr<GpuTimeline>> CreateTimelineImpl() override;

 private:
  explicit CudaDevice(int ordinal);
  // Copies on the private stream and waits for it.
  Status CopyAndWait(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);

  CachingAllocator allocator_;
  PinnedStaging staging_;
  cudaStream_t transfer_stream_ = nullptr;
  std::mutex transfer_mutex_;

  std::mutex streams_mutex_;
  std::vector<cudaStream_t> streams_;

  std::mutex watchdogs_mutex_;
  std::map<int, Watchdog> watchdogs_;
  int next_watchdog_ = 0;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_DEVICE_H_
