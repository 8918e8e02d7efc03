#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_GRADIENT_CONTROL_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_GRADIENT_CONTROL_SHAPES_H_

// Attributes of org.zerograph GradientControl (docs/formats.md), shared by every device: a backend
// derives its kernel from this base and implements only ComputeImpl.
//   GradientControl(sum_squares[, scale, good_steps]) -> (control[3][, new_scale, new_good_steps])
// The contract has checked the attributes' ranges and that scale and good_steps come together.

#include "runtime/kernels/gradient_control.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

class GradientControlKernelBase : public OpKernel {
 public:
  static StatusOr<GradientControlAttrs> ParseAttrs(const KernelInfo& info) {
    const Node& node = *info.node;
    GradientControlAttrs attrs;
    ZG_ASSIGN_OR_RETURN(const float max_norm, ContractFloat(node, "max_norm"));
    ZG_ASSIGN_OR_RETURN(const float growth, ContractFloat(node, "growth_factor"));
    ZG_ASSIGN_OR_RETURN(const float backoff, ContractFloat(node, "backoff_factor"));
    ZG_ASSIGN_OR_RETURN(attrs.growth_interval, ContractInt(node, "growth_interval"));
    attrs.max_norm = max_norm;
    attrs.growth_factor = growth;
    attrs.backoff_factor = backoff;
    return attrs;
  }
  GradientControlKernelBase(const KernelInfo& info, GradientControlAttrs attrs)
      : OpKernel(info), attrs_(attrs), scaled_(info.node->num_outputs() == 3) {}

 protected:
  const GradientControlAttrs attrs_;
  // Whether the node does dynamic loss scaling (scale and good_steps in, their next values out).
  const bool scaled_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_GRADIENT_CONTROL_SHAPES_H_
