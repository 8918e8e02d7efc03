#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_SOFTMAX_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_SOFTMAX_SHAPES_H_

// The axis of Softmax, LogSoftmax and ONNX Runtime's SoftmaxGrad_13 / LogSoftmaxGrad_13, shared
// by every device: a backend derives its kernel from SoftmaxKernelBase and implements
// ComputeImpl over Layout(x).

#include <variant>

#include "runtime/kernels/axis_layout.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

struct SoftmaxAttrs {
  int64_t axis = -1;
  // Before opset 13 ONNX's Softmax and LogSoftmax coerce the input to 2-D at the axis: a row is
  // every dimension from the axis on.
  bool coerce_to_2d = false;
};

class SoftmaxKernelBase : public OpKernel {
 public:
  static StatusOr<SoftmaxAttrs> ParseAttrs(const KernelInfo& info) {
    SoftmaxAttrs attrs;
    if (info.node->HasAttribute("axis")) {
      ZG_ASSIGN_OR_RETURN(attrs.axis, ContractInt(*info.node, "axis"));
    } else {
      // The default of the node's version (1 before opset 13), not of the newest (-1), which
      // is what ContractInt would give.
      const OpAttribute* axis = info.contract->FindAttribute("axis");
      ZG_RET_CHECK(axis != nullptr && std::holds_alternative<int64_t>(axis->default_value),
                   info.contract->ToString(), " declares no default axis");
      attrs.axis = std::get<int64_t>(axis->default_value);
    }
    attrs.coerce_to_2d = info.contract->domain.empty() && info.contract->since_version < 13;
    return attrs;
  }
  SoftmaxKernelBase(const KernelInfo& info, SoftmaxAttrs attrs) : OpKernel(info), attrs_(attrs) {}

 protected:
  StatusOr<AxisLayout> Layout(const DeviceTensor& x) const {
    ZG_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(attrs_.axis, x.rank()));
    return attrs_.coerce_to_2d ? LayoutFrom(x.shape(), axis) : LayoutAround(x.shape(), axis);
  }

  const SoftmaxAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_SOFTMAX_SHAPES_H_
