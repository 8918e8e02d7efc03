// The CPU's fused-buffer kernels (kernels/fused_buffers.h) through HostMemory.

#include "runtime/kernels/fused_buffers.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/host_memory.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/shape_ops.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {

Status RegisterCpuFusedBufferKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::string domain(kZerographDomain);
  const std::vector<DataType> all = AllDtypes::Vector();
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "CoalesceTensors", kCpu, all, 0, {}, &CoalesceTensorsKernel<HostMemory>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "TensorViews", kCpu, all, 0, {}, &TensorViewsKernel<HostMemory>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "LocalShard", kCpu, all, 0, {}, &LocalShardKernel<HostMemory>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Nop",
                                        kCpu,
                                        GradientDtypes::Vector(),
                                        0,
                                        {},
                                        MakeKernel<CopyInputKernel<HostMemory>>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
