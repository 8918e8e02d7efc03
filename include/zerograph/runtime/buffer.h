#ifndef ZEROGRAPH_RUNTIME_BUFFER_H_
#define ZEROGRAPH_RUNTIME_BUFFER_H_

#include <cstddef>

namespace zerograph::runtime {

class Device;

// One allocation on a device; tensors are typed views into buffers, shared through shared_ptr so a
// view keeps its memory alive. A backend subclasses it to free the memory in its destructor
// (CPU: free; CUDA: cudaFree or return to a caching allocator).
class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Device& device() const { return *device_; }
  // The start of the allocation in the device's address space: host memory on CPU, a device
  // pointer on CUDA (dereference it on the host only when Device::host_accessible()).
  void* data() const { return data_; }
  size_t size() const { return size_; }

 protected:
  Buffer(Device& device, void* data, size_t size) : device_(&device), data_(data), size_(size) {}

 private:
  Device* device_;
  void* data_;
  size_t size_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_BUFFER_H_
