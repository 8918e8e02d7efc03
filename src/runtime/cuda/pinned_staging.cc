#include "runtime/cuda/pinned_staging.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "runtime/cuda/cuda_check.h"

namespace zerograph::runtime {
namespace {

constexpr size_t kMinSlotBytes = size_t{1} << 20;

// What a host function needs: the slot to release, and for a download where its bytes go.
struct HostCopy {
  std::atomic<bool>* busy;
  const void* from;
  void* to;  // null for an upload
  size_t bytes;
};

// Runs on a CUDA driver thread when the stream gets there; must call no CUDA function.
void CopyOutAndRelease(void* data) {
  std::unique_ptr<HostCopy> copy(static_cast<HostCopy*>(data));
  if (copy->to != nullptr) std::memcpy(copy->to, copy->from, copy->bytes);
  copy->busy->store(false, std::memory_order_release);
}

}  // namespace

PinnedStaging::~PinnedStaging() {
  for (const std::unique_ptr<Slot>& slot : slots_) cudaFreeHost(slot->data);
}

StatusOr<PinnedStaging::Slot*> PinnedStaging::Acquire(size_t bytes, std::string_view where) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot* best = nullptr;
  for (const std::unique_ptr<Slot>& slot : slots_) {
    if (slot->bytes >= bytes && !slot->busy.load(std::memory_order_acquire) &&
        (best == nullptr || slot->bytes < best->bytes)) {
      best = slot.get();
    }
  }
  if (best == nullptr) {
    auto slot = std::make_unique<Slot>();
    slot->bytes = std::max(kMinSlotBytes, std::bit_ceil(bytes));
    ZG_CUDA_CHECK(where, cudaMallocHost(&slot->data, slot->bytes));
    best = slot.get();
    slots_.push_back(std::move(slot));
  }
  best->busy.store(true, std::memory_order_relaxed);
  return best;
}

Status PinnedStaging::ReleaseAfter(Slot* slot, void* host, size_t bytes, cudaStream_t stream,
                                   std::string_view where) {
  auto copy = std::make_unique<HostCopy>(HostCopy{&slot->busy, slot->data, host, bytes});
  if (cudaLaunchHostFunc(stream, &CopyOutAndRelease, copy.get()) == cudaSuccess) {
    copy.release();  // the host function owns it now
    return Status::Ok();
  }
  cudaGetLastError();
  ZG_CUDA_CHECK(where, cudaStreamSynchronize(stream));
  CopyOutAndRelease(copy.release());
  return Status::Ok();
}

Status PinnedStaging::Upload(const void* host, void* device, size_t bytes, cudaStream_t stream,
                             std::string_view where) {
  ZG_ASSIGN_OR_RETURN(Slot * slot, Acquire(bytes, where));
  std::memcpy(slot->data, host, bytes);
  const cudaError_t copied =
      cudaMemcpyAsync(device, slot->data, bytes, cudaMemcpyHostToDevice, stream);
  ZG_RETURN_IF_ERROR(ReleaseAfter(slot, nullptr, 0, stream, where));
  return CudaStatus(copied, where, "cudaMemcpyAsync (host to device, staged)");
}

Status PinnedStaging::Download(const void* device, void* host, size_t bytes, cudaStream_t stream,
                               std::string_view where) {
  ZG_ASSIGN_OR_RETURN(Slot * slot, Acquire(bytes, where));
  const cudaError_t copied =
      cudaMemcpyAsync(slot->data, device, bytes, cudaMemcpyDeviceToHost, stream);
  if (copied != cudaSuccess) {
    slot->busy.store(false, std::memory_order_release);
    return CudaStatus(copied, where, "cudaMemcpyAsync (device to host, staged)");
  }
  return ReleaseAfter(slot, host, bytes, stream, where);
}

}  // namespace zerograph::runtime
