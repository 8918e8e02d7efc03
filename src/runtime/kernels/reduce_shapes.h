#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_

// Attributes of ONNX's reductions and ReduceSumTraining (ONNX semantics across opsets: axes from
// the `axes` attribute or the second input, read on the host), shared by every device: a backend
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
    // Versions with the axes attribute have no noop_with_empty_axes.
    int64_t noop = 0;
    if (info.contract->FindAttribute("noop_with_empty_axes") != nullptr) {
      ZG_ASSIGN_OR_RETURN(noop, ContractInt(*info.node, "noop_with_empty_axes"));
    }
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
  // Which of the input's axes are reduced, at run time (axes from the attribute or the host
  // input 1): none only with noop_with_empty_axes and no axes.
  StatusOr<std::vector<bool>> ReducedAxesOf(const KernelContext& ctx) const {
    std::vector<int64_t> axes = attrs_.axes.value_or(std::vector<int64_t>{});
    if (ctx.inputs.size() > 1 && ctx.inputs[1] != nullptr) {
      ZG_ASSIGN_OR_RETURN(axes, ReadInt64Values(*ctx.inputs[1], "axes"));
    }
    return ReducedAxes(axes, ctx.inputs[0]->rank(), attrs_.noop_with_empty_axes);
  }
  // The input's shape with its `reduced` axes set to 1.
  static Shape KeptShape(const DeviceTensor& x, const std::vector<bool>& reduced) {
    Shape kept = x.shape();
    for (size_t d = 0; d < kept.size(); ++d) {
      if (reduced[d]) kept[d] = 1;
    }
    return kept;
  }
  static bool NoneReduced(const std::vector<bool>& reduced) {
    for (bool r : reduced) {
      if (r) return false;
    }
    return true;
  }

  const ReduceAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_
