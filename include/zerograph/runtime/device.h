#ifndef ZEROGRAPH_RUNTIME_DEVICE_H_
#define ZEROGRAPH_RUNTIME_DEVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"
#include "zerograph/runtime/buffer.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {

class DeviceTensor;

enum class DeviceType : int32_t {
  kCpu = 0,
  kCuda = 1,
};

// "cpu", "cuda".
std::string_view DeviceTypeName(DeviceType type);

// When a device's streams reached points of their work, on the host's monotonic clock
// (steady_clock, in microseconds, as traces use), for devices whose stream tasks only launch the
// work. Timing events are recorded on the streams and read once the streams are done.
class GpuTimeline {
 public:
  virtual ~GpuTimeline() = default;
  // Starts a step: waits until `stream` reaches a reference point, read on the host clock there.
  // Every stream of the device must be idle (marks are timed from the reference).
  virtual Status Anchor(Stream& stream) = 0;
  // Records a point on `stream`; returns its index since the last Anchor.
  virtual StatusOr<size_t> Mark(Stream& stream) = 0;
  // Once the streams have passed every mark: when each was reached, by index.
  virtual StatusOr<std::vector<double>> MarkTimes() = 0;
};

// Where memory lives and work runs: allocates buffers, makes streams and events, and copies
// between the host and its memory. The public members check their arguments once and call the
// protected ones, which a backend implements (each says whether it is optional and what the
// default does). A device outlives its buffers, streams and events.
class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceType type() const { return type_; }
  // Which device of its type (the GPU index); 0 on CPU.
  int ordinal() const { return ordinal_; }
  // "cpu", "cuda:1".
  std::string name() const;
  // True when the host may read and write this device's buffers directly (CPU).
  virtual bool host_accessible() const = 0;

  // A buffer of `bytes` (0 is allowed), aligned for any element type and for vector loads.
  StatusOr<std::shared_ptr<Buffer>> Allocate(size_t bytes);
  // Bytes held in live buffers now, and the most ever held at once.
  size_t allocated_bytes() const { return allocated_bytes_.load(std::memory_order_relaxed); }
  size_t peak_allocated_bytes() const { return peak_bytes_.load(std::memory_order_relaxed); }

  StatusOr<std::unique_ptr<Stream>> CreateStream(std::string_view name) {
    return CreateStreamImpl(name);
  }
  StatusOr<std::unique_ptr<Event>> CreateEvent() { return CreateEventImpl(); }

  // Copies host bytes into `dst` (a contiguous tensor of this device; sizes must match), or
  // `src` out to host bytes, before returning.
  Status CopyFromHost(std::span<const std::byte> src, DeviceTensor& dst);
  Status CopyToHost(const DeviceTensor& src, std::span<std::byte> dst);
  // The same in `stream`'s order; the host bytes must stay valid until the stream reaches it.
  Status CopyFromHostAsync(std::span<const std::byte> src, DeviceTensor& dst, Stream& stream);
  Status CopyToHostAsync(const DeviceTensor& src, std::span<std::byte> dst, Stream& stream);
  // Copies `src` into `dst` (both contiguous tensors of this device, of one size) in the order of
  // `stream`, a stream of this device.
  Status CopyAsync(const DeviceTensor& src, DeviceTensor& dst, Stream& stream);

  // A timeline of this device's streams, for traces where the host's clock around a task does not
  // time its work (a CUDA task only launches a kernel); null where it does (CPU streams run their
  // tasks themselves).
  StatusOr<std::unique_ptr<GpuTimeline>> CreateTimeline() { return CreateTimelineImpl(); }

 protected:
  Device(DeviceType type, int ordinal) : type_(type), ordinal_(ordinal) {}

  // Required. `bytes` may be 0 (return a valid buffer of size 0).
  virtual StatusOr<std::unique_ptr<Buffer>> AllocateImpl(size_t bytes) = 0;
  virtual StatusOr<std::unique_ptr<Stream>> CreateStreamImpl(std::string_view name) = 0;
  virtual StatusOr<std::unique_ptr<Event>> CreateEventImpl() = 0;
  // Required: synchronous copies; `device_ptr` lies in one of this device's buffers.
  virtual Status CopyFromHostImpl(const void* host, void* device_ptr, size_t bytes) = 0;
  virtual Status CopyToHostImpl(const void* device_ptr, void* host, size_t bytes) = 0;
  // Optional: copies in stream order. Default: Synchronize() the stream, then copy synchronously.
  virtual Status CopyFromHostAsyncImpl(const void* host, void* device_ptr, size_t bytes,
                                       Stream& stream);
  virtual Status CopyToHostAsyncImpl(const void* device_ptr, void* host, size_t bytes,
                                     Stream& stream);
  // Optional: a copy within this device's memory in stream order. Default (host-accessible
  // memory): Synchronize() the stream, then memcpy.
  virtual Status CopyAsyncImpl(const void* src, void* dst, size_t bytes, Stream& stream);
  // Optional: default none (the host's clock times the streams' work).
  virtual StatusOr<std::unique_ptr<GpuTimeline>> CreateTimelineImpl() {
    return std::unique_ptr<GpuTimeline>();
  }

 private:
  DeviceType type_;
  int ordinal_;
  std::atomic<size_t> allocated_bytes_{0};
  std::atomic<size_t> peak_bytes_{0};
};

// The host as a device: 64-byte aligned buffers (2 MiB aligned and backed by huge pages when
// large), streams that are worker threads, events that join them.
std::unique_ptr<Device> CreateCpuDevice();

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_DEVICE_H_
