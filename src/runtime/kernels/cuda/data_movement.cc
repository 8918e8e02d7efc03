// Data movement on CUDA: the shared Identity, Reshape, Constant and fused-buffer kernels through
// CudaMemory (cudaMemcpyAsync / cudaMemsetAsync on the kernel's stream), and Transpose as a
// strided gather (elementwise.cu). Registered for the CPU's ops and dtypes.

#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/fused_buffers.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/shape_ops.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

class CudaTransposeKernel final : public TransposeKernelBase {
 public:
  using TransposeKernelBase::TransposeKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const BroadcastPlan plan, GatherPlan(x, y));
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer index, MakeStridedIndexer(plan));
    return CudaLaunchStatus(cuda::LaunchGather(x.element_size(), x.data(), y.data(), y.numel(),
                                               index, NativeStream(ctx)),
                            "transpose kernel");
  }
};

}  // namespace

Status RegisterCudaDataMovementKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCuda = DeviceType::kCuda;
  const std::vector<DataType> all = AllDtypes::Vector();
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Identity", kCuda, all, 0, {}, MakeKernel<CopyInputKernel<CudaMemory>>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Reshape", kCuda, all, 0, {}, MakeKernel<CopyInputKernel<CudaMemory>>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Transpose", kCuda, all, 0, {}, MakeKernelWithAttrs<CudaTransposeKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Constant",
                                        kCuda,
                                        {kUndefined},
                                        -1,
                                        {},
                                        MakeKernelWithAttrs<ConstantKernel<CudaMemory>>}));
  const std::string domain(kZerographDomain);
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "CoalesceTensors", kCuda, all, 0, {}, &CoalesceTensorsKernel<CudaMemory>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "TensorViews", kCuda, all, 0, {}, &TensorViewsKernel<CudaMemory>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "LocalShard", kCuda, all, 0, {}, &LocalShardKernel<CudaMemory>::Create}));
  return registry.Register({domain,
                            "Nop",
                            kCuda,
                            GradientDtypes::Vector(),
                            0,
                            {},
                            MakeKernel<CopyInputKernel<CudaMemory>>});
}

}  // namespace zerograph::runtime
