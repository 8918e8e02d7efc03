// Data movement on CUDA: the shared Identity, Reshape, Constant and fused-buffer kernels through
// CudaMemory (cudaMemcpyAsync / cudaMemsetAsync on the kernel's stream), Transpose as a strided
// gather (elementwise.cu), and the byte movers of kernels/data_movement_shapes.h through
// CudaMover. Registered for the CPU's ops and dtypes.

#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/cuda/gather_launch.h"
#include "runtime/kernels/data_movement_shapes.h"
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

// The mover policy of kernels/data_movement_shapes.h on a GPU, on the kernel's stream.
struct CudaMover : CudaMemory {
  static Status Gather(const void* src, size_t element_size, const BroadcastPlan& plan, void* dst,
                       const KernelContext& ctx) {
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer index, MakeStridedIndexer(plan));
    int64_t n = 1;
    for (int64_t d : plan.dims) n *= d;
    return CudaLaunchStatus(cuda::LaunchGather(element_size, src, dst, n, index, NativeStream(ctx)),
                            "gather kernel");
  }
  static Status Copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                       size_t height, const KernelContext& ctx) {
    return CudaLaunchStatus(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height,
                                              cudaMemcpyDeviceToDevice, NativeStream(ctx)),
                            "cudaMemcpy2DAsync");
  }
  // Waits for the copy: the caller frees `src` when this returns.
  static Status CopyFromHostNow(const void* src, void* dst, size_t bytes,
                                const KernelContext& ctx) {
    if (bytes == 0) return Status::Ok();
    ZG_RETURN_IF_ERROR(CudaLaunchStatus(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, NativeStream(ctx)),
        "cudaMemcpyAsync"));
    return CudaLaunchStatus(cudaStreamSynchronize(NativeStream(ctx)), "cudaStreamSynchronize");
  }
  static Status Fill(void* dst, size_t element_size, uint64_t pattern, int64_t n,
                     const KernelContext& ctx) {
    return CudaLaunchStatus(cuda::LaunchFill(element_size, dst, pattern, n, NativeStream(ctx)),
                            "fill kernel");
  }
};

}  // namespace

Status RegisterCudaDataMovementKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCuda = DeviceType::kCuda;
  const std::vector<DataType> all = AllDtypes::Vector();
  for (const char* op : {"Squeeze", "Unsqueeze", "Flatten"}) {
    ZG_RETURN_IF_ERROR(
        registry.Register({"", op, kCuda, all, 0, {}, MakeKernel<CopyInputKernel<CudaMemory>>}));
  }
  for (const char* op : {"Shape", "Size"}) {
    ZG_RETURN_IF_ERROR(
        registry.Register({"", op, kCuda, all, 0, {}, &ShapeValuesKernel<CudaMover>::Create}));
  }
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Expand", kCuda, all, 0, {}, MakeKernel<ExpandKernel<CudaMover>>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Tile", kCuda, all, 0, {}, MakeKernel<TileKernel<CudaMover>>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Slice", kCuda, all, 0, {}, &SliceKernel<CudaMover>::Create}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Split", kCuda, all, 0, {}, &SplitKernel<CudaMover>::Create}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Concat", kCuda, all, 0, {}, &ConcatKernel<CudaMover>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Range",
                                        kCuda,
                                        {kFloat32, kFloat64, kInt32, kInt64},
                                        0,
                                        {},
                                        MakeKernel<RangeKernel<CudaMover>>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "ConstantOfShape", kCuda, {kInt64}, 0, {}, &ConstantOfShapeKernel<CudaMover>::Create}));
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
