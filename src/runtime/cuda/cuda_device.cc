#include "runtime/cuda/cuda_device.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_stream.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/cuda.h"

namespace zerograph::runtime {
namespace {

// Memory from the device's allocator, returned to it on destruction.
class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(CudaDevice& device, void* data, size_t size)
      : Buffer(device, data, size), cuda_(device) {}
  ~CudaBuffer() override { cuda_.FreeBlock(data(), size()); }

 private:
  CudaDevice& cuda_;
};

// Polling while a watchdog is registered: yield for the first polls (a step's last kernels end
// within microseconds), then sleep briefly so a long wait costs no core; run the checks every
// few milliseconds.
constexpr int kYieldPolls = 2000;
constexpr auto kPollSleep = std::chrono::microseconds(50);
constexpr auto kCheckEvery = std::chrono::milliseconds(5);

}  // namespace

CudaDevice::CudaDevice(int ordinal) : Device(DeviceType::kCuda, ordinal), allocator_(ordinal) {}

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(int ordinal) {
  const int count = CudaDeviceCount();
  if (ordinal < 0 || ordinal >= count) {
    return UnavailableError(StrCat("cuda:", ordinal, " does not exist: this process sees ", count,
                                   " GPU(s)", count == 0 ? " (no GPU or no CUDA driver)" : ""));
  }
  std::unique_ptr<CudaDevice> device(new CudaDevice(ordinal));
  ZG_RETURN_IF_ERROR(device->MakeCurrent());
  ZG_CUDA_CHECK(device->name(),
                cudaStreamCreateWithFlags(&device->transfer_stream_, cudaStreamNonBlocking));
  return device;
}

CudaDevice::~CudaDevice() {
  MakeCurrent().IgnoreError();
  // Host functions of staged copies and frees still queued finish before anything is released.
  cudaDeviceSynchronize();
  if (transfer_stream_ != nullptr) cudaStreamDestroy(transfer_stream_);
  cudaGetLastError();
}

Status CudaDevice::MakeCurrent() const { return MakeDeviceCurrent(ordinal()); }

int CudaDevice::AddWatchdog(Watchdog watchdog) {
  std::lock_guard<std::mutex> lock(watchdogs_mutex_);
  const int id = next_watchdog_++;
  watchdogs_.emplace(id, std::move(watchdog));
  return id;
}

void CudaDevice::RemoveWatchdog(int id) {
  std::lock_guard<std::mutex> lock(watchdogs_mutex_);
  watchdogs_.erase(id);
}

Status CudaDevice::WaitFor(const std::function<cudaError_t()>& query,
                           const std::function<cudaError_t()>& block, std::string_view what) {
  std::vector<Watchdog> watchdogs;
  {
    std::lock_guard<std::mutex> lock(watchdogs_mutex_);
    for (const auto& [id, watchdog] : watchdogs_) watchdogs.push_back(watchdog);
  }
  if (watchdogs.empty()) return CudaStatus(block(), name(), StrCat("waiting for ", what));
  std::chrono::seconds timeout = watchdogs.front().timeout;
  for (const Watchdog& watchdog : watchdogs) timeout = std::min(timeout, watchdog.timeout);
  const auto start = std::chrono::steady_clock::now();
  auto next_check = start + kCheckEvery;
  for (int polls = 0;; ++polls) {
    const cudaError_t result = query();
    if (result != cudaErrorNotReady) {
      return CudaStatus(result, name(), StrCat("waiting for ", what));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_check) {
      next_check = now + kCheckEvery;
      for (const Watchdog& watchdog : watchdogs) ZG_RETURN_IF_ERROR(watchdog.check());
      if (now - start >= timeout) {
        return UnavailableError(
            StrCat(name(), ": ", what, " is not done after ", timeout.count(),
                   " s; another rank probably failed or stopped inside a collective (the limit is "
                   "graph-exec's --timeout, ZG_TIMEOUT, or ZG_NCCL_TIMEOUT_S)"));
      }
    }
    if (polls < kYieldPolls) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollSleep);
    }
  }
}

void CudaDevice::AddStream(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  streams_.push_back(stream);
}

void CudaDevice::RemoveStream(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  streams_.erase(std::remove(streams_.begin(), streams_.end(), stream), streams_.end());
}

void CudaDevice::FreeBlock(void* block, size_t bytes) {
  MakeCurrent().IgnoreError();
  std::lock_guard<std::mutex> lock(streams_mutex_);
  allocator_.Free(block, bytes, streams_);
}

StatusOr<std::unique_ptr<Buffer>> CudaDevice::AllocateImpl(size_t bytes) {
  ZG_RETURN_IF_ERROR(MakeCurrent());
  ZG_ASSIGN_OR_RETURN(void* block, allocator_.Allocate(bytes));
  return std::unique_ptr<Buffer>(new CudaBuffer(*this, block, bytes));
}

StatusOr<std::unique_ptr<Stream>> CudaDevice::CreateStreamImpl(std::string_view name) {
  return CudaStream::Create(*this, std::string(name));
}

StatusOr<std::unique_ptr<Event>> CudaDevice::CreateEventImpl() { return CudaEvent::Create(*this); }

Status CudaDevice::CopyAndWait(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return Status::Ok();
  ZG_RETURN_IF_ERROR(MakeCurrent());
  std::lock_guard<std::mutex> lock(transfer_mutex_);
  ZG_CUDA_CHECK(name(), cudaMemcpyAsync(dst, src, bytes, kind, transfer_stream_));
  ZG_CUDA_CHECK(name(), cudaStreamSynchronize(transfer_stream_));
  return Status::Ok();
}

Status CudaDevice::CopyFromHostImpl(const void* host, void* device_ptr, size_t bytes) {
  return CopyAndWait(device_ptr, host, bytes, cudaMemcpyHostToDevice);
}

Status CudaDevice::CopyToHostImpl(const void* device_ptr, void* host, size_t bytes) {
  return CopyAndWait(host, device_ptr, bytes, cudaMemcpyDeviceToHost);
}

namespace {

// Whether `host` is page-locked (cudaMallocHost or cudaHostRegister), so DMA reads it directly.
bool IsPinned(const void* host) {
  cudaPointerAttributes attributes{};
  const bool pinned = cudaPointerGetAttributes(&attributes, host) == cudaSuccess &&
                      attributes.type == cudaMemoryTypeHost;
  cudaGetLastError();
  return pinned;
}

}  // namespace

Status CudaDevice::CopyFromHostAsyncImpl(const void* host, void* device_ptr, size_t bytes,
                                         Stream& stream) {
  if (bytes == 0) return Status::Ok();
  ZG_RETURN_IF_ERROR(MakeCurrent());
  auto native = static_cast<cudaStream_t>(stream.native_handle());
  if (IsPinned(host)) {
    ZG_CUDA_CHECK(name(), cudaMemcpyAsync(device_ptr, host, bytes, cudaMemcpyHostToDevice, native));
    return Status::Ok();
  }
  if (bytes <= PinnedStaging::kMaxBytes) {
    return staging_.Upload(host, device_ptr, bytes, native, name());
  }
  ZG_RETURN_IF_ERROR(stream.Synchronize());
  return CopyFromHostImpl(host, device_ptr, bytes);
}

Status CudaDevice::CopyToHostAsyncImpl(const void* device_ptr, void* host, size_t bytes,
                                       Stream& stream) {
  if (bytes == 0) return Status::Ok();
  ZG_RETURN_IF_ERROR(MakeCurrent());
  auto native = static_cast<cudaStream_t>(stream.native_handle());
  if (IsPinned(host)) {
    ZG_CUDA_CHECK(name(), cudaMemcpyAsync(host, device_ptr, bytes, cudaMemcpyDeviceToHost, native));
    return Status::Ok();
  }
  if (bytes <= PinnedStaging::kMaxBytes) {
    return staging_.Download(device_ptr, host, bytes, native, name());
  }
  ZG_RETURN_IF_ERROR(stream.Synchronize());
  return CopyToHostImpl(device_ptr, host, bytes);
}

bool CudaBackendBuilt() { return true; }

int CudaDeviceCount() {
  int count = 0;
  // Without a driver or a GPU this fails (cudaErrorNoDevice, cudaErrorInsufficientDriver): none.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::Create(ordinal));
  return std::unique_ptr<Device>(std::move(device));
}

Status CudaDevice::CopyAsyncImpl(const void* src, void* dst, size_t bytes, Stream& stream) {
  ZG_RETURN_IF_ERROR(MakeDeviceCurrent(ordinal()));
  ZG_CUDA_CHECK(name(), cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                        static_cast<cudaStream_t>(stream.native_handle())));
  return Status::Ok();
}

}  // namespace zerograph::runtime
