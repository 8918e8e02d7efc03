// The reductions and ArgMax/ArgMin on CUDA (reduce.cu), shapes from the shared bases, for the
// CPU's dtypes. A reduction's input dimensions split into two walks: the kept ones (one output
// each) and the reduced ones, each collapsed to few dimensions.

#include <memory>
#include <vector>

#include "runtime/kernels/arg_reduce_shapes.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/reduce_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/reduce_shapes.h"

namespace zerograph::runtime {
namespace {

template <ReduceOp kOp>
class CudaReduceKernel final : public ReduceKernelBase {
 public:
  using ReduceKernelBase::ReduceKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const std::vector<bool> reduced, ReducedAxesOf(ctx));
    if (NoneReduced(reduced)) {
      return CudaMemory::CopyBytes(x.data(), y.data(), y.byte_size(), ctx);
    }
    Shape output_dims, output_strides, reduced_dims, reduced_strides;
    for (size_t d = 0; d < reduced.size(); ++d) {
      (reduced[d] ? reduced_dims : output_dims).push_back(x.shape()[d]);
      (reduced[d] ? reduced_strides : output_strides).push_back(x.strides()[d]);
    }
    const int64_t count = NumElements(reduced_dims);
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer outputs_index,
                        MakeStridedIndexer(CollapsePlan(output_dims, {output_strides})));
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer reduced_index,
                        MakeStridedIndexer(CollapsePlan(reduced_dims, {reduced_strides})));
    return CudaLaunchStatus(cuda::LaunchReduce(dtype(), kOp, x.data(), y.data(), y.numel(), count,
                                               outputs_index, reduced_index, NativeStream(ctx)),
                            "reduce kernel");
  }
};

template <bool kMax>
class CudaArgReduceKernel final : public ArgReduceKernelBase {
 public:
  using ArgReduceKernelBase::ArgReduceKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(x));
    ZG_RETURN_IF_NOT(l.n > 0 || ctx.outputs[0]->numel() == 0, "ArgMax/ArgMin of an empty axis");
    return CudaLaunchStatus(cuda::LaunchArgReduce(dtype(), kMax, attrs_.select_last_index, x.data(),
                                                  ctx.outputs[0]->data_as<int64_t>(), l.outer, l.n,
                                                  l.inner, NativeStream(ctx)),
                            "arg reduce kernel");
  }
};

using Factory = StatusOr<std::unique_ptr<OpKernel>> (*)(const KernelInfo&);
struct ReductionOp {
  std::string_view domain;
  std::string_view name;
  Factory factory;
};

template <ReduceOp kOp>
constexpr Factory kFactory = MakeKernelWithAttrs<CudaReduceKernel<kOp>>;

const ReductionOp kReductions[] = {
    {"", "ReduceSum", kFactory<ReduceOp::kSum>},
    {"", "ReduceMean", kFactory<ReduceOp::kMean>},
    {"", "ReduceMax", kFactory<ReduceOp::kMax>},
    {"", "ReduceMin", kFactory<ReduceOp::kMin>},
    {"", "ReduceProd", kFactory<ReduceOp::kProd>},
    {"", "ReduceSumSquare", kFactory<ReduceOp::kSumSquare>},
    {"", "ReduceL1", kFactory<ReduceOp::kL1>},
    {"", "ReduceL2", kFactory<ReduceOp::kL2>},
    {"", "ReduceLogSum", kFactory<ReduceOp::kLogSum>},
    {"", "ReduceLogSumExp", kFactory<ReduceOp::kLogSumExp>},
    {"com.microsoft", "ReduceSumTraining", kFactory<ReduceOp::kSum>},
    {"", "ArgMax", MakeKernelWithAttrs<CudaArgReduceKernel<true>>},
    {"", "ArgMin", MakeKernelWithAttrs<CudaArgReduceKernel<false>>},
};

}  // namespace

Status RegisterCudaReduceKernels(KernelRegistry& registry) {
  for (const ReductionOp& op : kReductions) {
    ZG_RETURN_IF_ERROR(registry.Register({std::string(op.domain),
                                          std::string(op.name),
                                          DeviceType::kCuda,
                                          NumericDtypes::Vector(),
                                          0,
                                          {},
                                          op.factory}));
  }
  return Status::Ok();
}

}  // namespace zerograph::runtime
