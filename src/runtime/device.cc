#include "zerograph/runtime/device.h"

#include <cstring>

#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/device_tensor.h"

namespace zerograph::runtime {
namespace {

// Checks that `tensor` is a contiguous tensor of `device` whose bytes match `host_bytes`.
Status CheckHostCopy(const Device& device, const DeviceTensor& tensor, size_t host_bytes) {
  ZG_RETURN_IF_NOT(!tensor.empty(), "copy to or from an empty tensor");
  ZG_RETURN_IF_NOT(&tensor.device() == &device, "tensor of ", tensor.device().name(),
                   " copied through ", device.name());
  ZG_RETURN_IF_NOT(tensor.is_contiguous(), "copy of a non-contiguous tensor ", tensor.ToString());
  ZG_RETURN_IF_NOT(tensor.byte_size() == host_bytes, "copy of ", host_bytes, " host bytes into ",
                   tensor.ToString(), " (", tensor.byte_size(), " bytes)");
  return Status::Ok();
}

}  // namespace

std::string_view DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kCuda:
      return "cuda";
  }
  return "unknown";
}

std::string Device::name() const {
  if (type_ == DeviceType::kCpu) return std::string(DeviceTypeName(type_));
  return StrCat(DeviceTypeName(type_), ":", ordinal_);
}

StatusOr<std::shared_ptr<Buffer>> Device::Allocate(size_t bytes) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer, AllocateImpl(bytes));
  ZG_RET_CHECK(buffer != nullptr && buffer->size() == bytes);
  const size_t now = allocated_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  // The deleter keeps the byte count right; the device outlives its buffers.
  return std::shared_ptr<Buffer>(buffer.release(), [this](Buffer* b) {
    allocated_bytes_.fetch_sub(b->size(), std::memory_order_relaxed);
    delete b;
  });
}

Status Device::CopyFromHost(std::span<const std::byte> src, DeviceTensor& dst) {
  ZG_RETURN_IF_ERROR(CheckHostCopy(*this, dst, src.size()));
  return CopyFromHostImpl(src.data(), dst.data(), src.size());
}

Status Device::CopyToHost(const DeviceTensor& src, std::span<std::byte> dst) {
  ZG_RETURN_IF_ERROR(CheckHostCopy(*this, src, dst.size()));
  return CopyToHostImpl(src.data(), dst.data(), dst.size());
}

Status Device::CopyFromHostAsync(std::span<const std::byte> src, DeviceTensor& dst,
                                 Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckHostCopy(*this, dst, src.size()));
  ZG_RETURN_IF_NOT(&stream.device() == this, "stream '", stream.name(), "' of ",
                   stream.device().name(), " used for a copy on ", name());
  return CopyFromHostAsyncImpl(src.data(), dst.data(), src.size(), stream);
}

Status Device::CopyToHostAsync(const DeviceTensor& src, std::span<std::byte> dst, Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckHostCopy(*this, src, dst.size()));
  ZG_RETURN_IF_NOT(&stream.device() == this, "stream '", stream.name(), "' of ",
                   stream.device().name(), " used for a copy on ", name());
  return CopyToHostAsyncImpl(src.data(), dst.data(), dst.size(), stream);
}

Status Device::CopyAsync(const DeviceTensor& src, DeviceTensor& dst, Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckHostCopy(*this, src, dst.byte_size()));
  ZG_RETURN_IF_NOT(!dst.empty() && &dst.device() == this && dst.is_contiguous(), "copy of ",
                   src.ToString(), " into ", dst.ToString(), " (both contiguous, on ", name(), ")");
  ZG_RETURN_IF_NOT(&stream.device() == this, "stream '", stream.name(), "' of ",
                   stream.device().name(), " used for a copy on ", name());
  if (src.byte_size() == 0 || src.data() == dst.data()) return Status::Ok();
  return CopyAsyncImpl(src.data(), dst.data(), src.byte_size(), stream);
}

Status Device::CopyAsyncImpl(const void* src, void* dst, size_t bytes, Stream& stream) {
  ZG_RETURN_IF_NOT(host_accessible(), name(), " has no device-to-device copy");
  ZG_RETURN_IF_ERROR(stream.Synchronize());
  std::memcpy(dst, src, bytes);
  return Status::Ok();
}

Status Device::CopyFromHostAsyncImpl(const void* host, void* device_ptr, size_t bytes,
                                     Stream& stream) {
  ZG_RETURN_IF_ERROR(stream.Synchronize());
  return CopyFromHostImpl(host, device_ptr, bytes);
}

Status Device::CopyToHostAsyncImpl(const void* device_ptr, void* host, size_t bytes,
                                   Stream& stream) {
  ZG_RETURN_IF_ERROR(stream.Synchronize());
  return CopyToHostImpl(device_ptr, host, bytes);
}

}  // namespace zerograph::runtime
