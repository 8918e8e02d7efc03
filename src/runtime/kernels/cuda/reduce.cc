// ReduceSum and ReduceMean on CUDA (reduce.cu), shapes from the shared base, for the CPU's dtypes.
// The input's dimensions split into two walks: the kept ones (one output each) and the reduced
// ones (summed), each collapsed to few dimensions.

#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/reduce_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/reduce_shapes.h"

namespace zerograph::runtime {
namespace {

template <bool kMean>
class CudaReduceKernel final : public ReduceKernelBase {
 public:
  using ReduceKernelBase::ReduceKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (y.numel() == x.numel() && y.shape() == x.shape()) {  // nothing reduced
      return CudaMemory::CopyBytes(x.data(), y.data(), y.byte_size(), ctx);
    }
    ZG_ASSIGN_OR_RETURN(const Shape kept, KeptShape(ctx));
    Shape output_dims, output_strides, reduced_dims, reduced_strides;
    for (size_t d = 0; d < kept.size(); ++d) {
      const bool reduced = kept[d] != x.shape()[d];
      (reduced ? reduced_dims : output_dims).push_back(x.shape()[d]);
      (reduced ? reduced_strides : output_strides).push_back(x.strides()[d]);
    }
    const int64_t count = NumElements(reduced_dims);
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer outputs_index,
                        MakeStridedIndexer(CollapsePlan(output_dims, {output_strides})));
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer reduced_index,
                        MakeStridedIndexer(CollapsePlan(reduced_dims, {reduced_strides})));
    return CudaLaunchStatus(cuda::LaunchReduce(dtype(), kMean, x.data(), y.data(), y.numel(), count,
                                               outputs_index, reduced_index, NativeStream(ctx)),
                            "reduce kernel");
  }
};

}  // namespace

Status RegisterCudaReduceKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "ReduceSum",
                                        kCuda,
                                        NumericDtypes::Vector(),
                                        0,
                                        {},
                                        MakeKernelWithAttrs<CudaReduceKernel<false>>}));
  return registry.Register({"",
                            "ReduceMean",
                            kCuda,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            MakeKernelWithAttrs<CudaReduceKernel<true>>});
}

}  // namespace zerograph::runtime
