#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/cpu/cpu_stream.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/device.h"

namespace zerograph::runtime {
namespace {

// Large buffers are aligned to huge pages and ask for them: first touch of 4 KiB pages costs
// 8-50x a warm copy on our VMs (research/perf-anchors.md §6).
constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugePageThreshold = size_t{4} << 20;
// Cache line and AVX-512 vector alignment for everything else.
constexpr size_t kAlignment = 64;

class CpuBuffer final : public Buffer {
 public:
  CpuBuffer(Device& device, void* data, size_t size) : Buffer(device, data, size) {}
  ~CpuBuffer() override { std::free(data()); }
};

class CpuDevice final : public Device {
 public:
  CpuDevice() : Device(DeviceType::kCpu, 0) {}
  bool host_accessible() const override { return true; }

 protected:
  StatusOr<std::unique_ptr<Buffer>> AllocateImpl(size_t bytes) override {
    const size_t alignment = bytes >= kHugePageThreshold ? kHugePageBytes : kAlignment;
    void* data = nullptr;
    // A zero-byte buffer still gets a distinct address.
    const int error = posix_memalign(&data, alignment, bytes == 0 ? kAlignment : bytes);
    if (error != 0) {
      return UnavailableError(
          StrCat("cpu: cannot allocate ", bytes, " bytes: ", std::strerror(error)));
    }
    if (alignment == kHugePageBytes) madvise(data, bytes, MADV_HUGEPAGE);  // a hint; may fail
    return std::unique_ptr<Buffer>(new CpuBuffer(*this, data, bytes));
  }

  StatusOr<std::unique_ptr<Stream>> CreateStreamImpl(std::string_view name) override {
    return std::unique_ptr<Stream>(new CpuStream(*this, std::string(name)));
  }

  StatusOr<std::unique_ptr<Event>> CreateEventImpl() override {
    return std::unique_ptr<Event>(new CpuEvent(*this));
  }

  Status CopyFromHostImpl(const void* host, void* device_ptr, size_t bytes) override {
    if (bytes > 0) std::memcpy(device_ptr, host, bytes);
    return Status::Ok();
  }

  Status CopyToHostImpl(const void* device_ptr, void* host, size_t bytes) override {
    if (bytes > 0) std::memcpy(host, device_ptr, bytes);
    return Status::Ok();
  }

  // The copy becomes a task of the stream, so the host does not wait.
  Status CopyFromHostAsyncImpl(const void* host, void* device_ptr, size_t bytes,
                               Stream& stream) override {
    return stream.Enqueue(
        [this, host, device_ptr, bytes] { return CopyFromHostImpl(host, device_ptr, bytes); });
  }
  Status CopyToHostAsyncImpl(const void* device_ptr, void* host, size_t bytes,
                             Stream& stream) override {
    return stream.Enqueue(
        [this, host, device_ptr, bytes] { return CopyToHostImpl(device_ptr, host, bytes); });
  }
};

}  // namespace

std::unique_ptr<Device> CreateCpuDevice() { return std::make_unique<CpuDevice>(); }

}  // namespace zerograph::runtime
