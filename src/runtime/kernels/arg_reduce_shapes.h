#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ARG_REDUCE_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ARG_REDUCE_SHAPES_H_

// Attributes of ArgMax and ArgMin (axis, keepdims, select_last_index from opset 12), shared by
// every device: a backend derives its kernel from ArgReduceKernelBase and implements ComputeImpl.

#include "runtime/kernels/axis_layout.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

struct ArgReduceAttrs {
  int64_t axis = 0;
  // Ties go to the last index instead of the first.
  bool select_last_index = false;
};

class ArgReduceKernelBase : public OpKernel {
 public:
  static StatusOr<ArgReduceAttrs> ParseAttrs(const KernelInfo& info) {
    ArgReduceAttrs attrs;
    ZG_ASSIGN_OR_RETURN(attrs.axis, ContractInt(*info.node, "axis"));
    if (info.contract->FindAttribute("select_last_index") != nullptr) {
      ZG_ASSIGN_OR_RETURN(int64_t last, ContractInt(*info.node, "select_last_index"));
      attrs.select_last_index = last != 0;
    }
    return attrs;
  }
  ArgReduceKernelBase(const KernelInfo& info, ArgReduceAttrs attrs)
      : OpKernel(info), attrs_(attrs) {}

 protected:
  StatusOr<AxisLayout> Layout(const DeviceTensor& x) const {
    ZG_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(attrs_.axis, x.rank()));
    return LayoutAround(x.shape(), axis);
  }

  const ArgReduceAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ARG_REDUCE_SHAPES_H_
