#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_HOST_MEMORY_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_HOST_MEMORY_H_

#include <cstddef>
#include <cstring>

#include "zerograph/core/status.h"
#include "zerograph/runtime/kernel.h"

namespace zerograph::runtime {

// The memory policy of the data-movement kernels (kernels/shape_ops.h, fused_buffers.h) on the
// CPU: memcpy and memset, run synchronously on the stream's worker thread.
struct HostMemory {
  // Copies `bytes` from `src` to `dst` unless they are the same memory (an output the executor
  // made a view of its input).
  static Status CopyBytes(const void* src, void* dst, size_t bytes, const KernelContext&) {
    if (src != dst && bytes > 0) std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  static Status Zero(void* dst, size_t bytes, const KernelContext&) {
    std::memset(dst, 0, bytes);
    return Status::Ok();
  }
  // From host memory `src` (a constant the kernel holds) into the device's `dst`.
  static Status CopyFromHost(const void* src, void* dst, size_t bytes, const KernelContext&) {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_HOST_MEMORY_H_
