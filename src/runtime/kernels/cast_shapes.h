#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CAST_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CAST_SHAPES_H_

// Shape inference of Cast(input) to the dtype in attribute `to`, shared by every device: a
// backend derives its kernel from CastKernelBase and implements only ComputeImpl. A cast to the
// input's own dtype is a copy, which the executor may make a view.

#include <utility>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

class CastKernelBase : public OpKernel {
 public:
  // The target dtype named by `to`.
  static StatusOr<DataType> ParseTarget(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t to, ContractInt(*info.node, "to"));
    std::optional<DataType> target = DataTypeFromOnnx(static_cast<int32_t>(to));
    ZG_RETURN_IF_NOT(target.has_value(), "attribute 'to' = ", to, " is not a data type");
    return *target;
  }
  CastKernelBase(const KernelInfo& info, DataType target) : OpKernel(info), target_(target) {}

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    if (ctx.input(0)->dtype == target_) outputs[0].view = OutputInfo::View{0, 0};
    return Status::Ok();
  }
  const DataType target_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CAST_SHAPES_H_
