// The collectives on the CPU (kernels/collectives.h; the communicator is MPI or local).

#include "runtime/kernels/collectives.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace zerograph::runtime {

Status RegisterCpuCollectiveKernels(KernelRegistry& registry) {
  return RegisterCollectiveKernels(registry, DeviceType::kCpu);
}

}  // namespace zerograph::runtime
