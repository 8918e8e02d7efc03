#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_

// Attributes of ReduceSum and ReduceMean (ONNX semantics across opsets: axes from the `axes`
// attribute or the optional second input, read on the host), shared by every device: a backend
// derives its kernel from ReduceKernelBase and implements only ComputeImpl.

#include <optional>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

struct ReduceAttrs {
  bool keepdims = true;
  bool noop_with_empty_axes = false;
  // From the attribute (older opsets); else from input 1 when present.
  std::optional<std::vector<int64_t>> axes;
};

class ReduceKernelBase : public OpKernel {
 public:
  static StatusOr<ReduceAttrs> ParseAttrs(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t keepdims, ContractInt(*info.node, "keepdims"));
    ZG_ASSIGN_OR_RETURN(int64_t noop, ContractInt(*info.node, "noop_with_empty_axes"));
    ReduceAttrs attrs{keepdims != 0, noop != 0, std::nullopt};
    if (info.node->HasAttribute("axes")) {
      ZG_ASSIGN_OR_RETURN(attrs.axes, ContractInts(*info.node, "axes"));
    }
    return attrs;
  }
  ReduceKernelBase(const KernelInfo& info, ReduceAttrs attrs)
      : OpKernel(info), attrs_(std::move(attrs)) {}

 protected:
  // No axes with noop_with_empty_axes: the output is the input.
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    const bool axes_input = ctx.input(1) != nullptr;
    bool no_axes = !axes_input && (!attrs_.axes || attrs_.axes->empty());
    if (axes_input && ctx.value(1) != nullptr) {
      ZG_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadInts(*ctx.value(1), "axes"));
      no_axes = axes.empty();
    }
    if (no_axes && attrs_.noop_with_empty_axes) outputs[0].view = OutputInfo::View{0, 0};
    return Status::Ok();
  }
  // The input's shape with its reduced axes set to 1, at run time (axes from the attribute or
  // the host input 1).
  StatusOr<Shape> KeptShape(const KernelContext& ctx) const {
    const DeviceTensor& x = *ctx.inputs[0];
    std::vector<int64_t> axes = attrs_.axes.value_or(std::vector<int64_t>{});
    if (ctx.inputs.size() > 1 && ctx.inputs[1] != nullptr) {
      ZG_ASSIGN_OR_RETURN(axes, ReadInt64Values(*ctx.inputs[1], "axes"));
    }
    ZG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        ReducedAxes(axes, x.rank(), attrs_.noop_with_empty_axes));
    Shape kept = x.shape();
    for (size_t d = 0; d < kept.size(); ++d) {
      if (reduced[d]) kept[d] = 1;
    }
    return kept;
  }

  const ReduceAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_
