#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_SHAPES_H_

// Shape inference of ReduceSum and ReduceMean (ONNX semantics across opsets: axes from the `axes`
// attribute or the optional second input, read on the host; `keepdims`, default 1;
// `noop_with_empty_axes`, default 0), shared by every device: a backend derives its kernel from
// ReduceKernelBase and implements only ComputeImpl.

#include <optional>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// Which axes of the input are reduced; `identity` when none are and that means "copy".
inline StatusOr<std::vector<bool>> ReducedAxes(const std::vector<int64_t>& axes, int64_t rank,
                                               bool noop_with_empty_axes, bool* identity) {
  *identity = axes.empty() && noop_with_empty_axes;
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop_with_empty_axes);
  for (int64_t axis : axes) {
    ZG_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank));
    ZG_RETURN_IF_NOT(!reduced[static_cast<size_t>(a)], "axis ", axis, " is listed twice");
    reduced[static_cast<size_t>(a)] = true;
  }
  return reduced;
}

struct ReduceAttrs {
  bool keepdims = true;
  bool noop_with_empty_axes = false;
  // From the attribute (older opsets); else from input 1 when present.
  std::optional<std::vector<int64_t>> axes;
};

class ReduceKernelBase : public OpKernel {
 public:
  static StatusOr<ReduceAttrs> ParseAttrs(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t keepdims, IntAttr(*info.node, "keepdims", 1));
    ZG_ASSIGN_OR_RETURN(int64_t noop, IntAttr(*info.node, "noop_with_empty_axes", 0));
    ReduceAttrs attrs{keepdims != 0, noop != 0, std::nullopt};
    if (info.node->HasAttribute("axes")) {
      ZG_ASSIGN_OR_RETURN(attrs.axes, IntsAttr(*info.node, "axes"));
    }
    return attrs;
  }
  ReduceKernelBase(const KernelInfo& info, ReduceAttrs attrs)
      : OpKernel(info), attrs_(std::move(attrs)) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1 || ctx.num_inputs() == 2, "expects 1 or 2 inputs");
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    std::vector<int64_t> axes = attrs_.axes.value_or(std::vector<int64_t>{});
    if (ctx.input(1) != nullptr) {
      ZG_RETURN_IF_NOT(!attrs_.axes, "axes given both as attribute and as input");
      const DeviceTensor* value = ctx.value(1);
      ZG_RETURN_IF_NOT(value != nullptr, "the axes input must be a constant");
      ZG_ASSIGN_OR_RETURN(axes, ReadInt64Values(*value, "axes"));
    }
    bool identity;
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    ZG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        ReducedAxes(axes, rank, attrs_.noop_with_empty_axes, &identity));
    OutputInfo out{TensorSpec{x->dtype, {}}};
    if (identity) {
      out.spec.shape = x->shape;
      out.view = OutputInfo::View{0, 0};
      return std::vector<OutputInfo>{std::move(out)};
    }
    for (size_t d = 0; d < x->shape.size(); ++d) {
      if (!reduced[d]) {
        out.spec.shape.push_back(x->shape[d]);
      } else if (attrs_.keepdims) {
        out.spec.shape.push_back(1);
      }
    }
    return std::vector<OutputInfo>{std::move(out)};
  }

  // The input's shape with its reduced axes set to 1, at run time (axes from the attribute or
  // the host input 1).
  StatusOr<Shape> KeptShape(const KernelContext& ctx) const {
    const DeviceTensor& x = *ctx.inputs[0];
    std::vector<int64_t> axes = attrs_.axes.value_or(std::vector<int64_t>{});
    if (ctx.inputs.size() > 1 && ctx.inputs[1] != nullptr) {
      ZG_ASSIGN_OR_RETURN(axes, ReadInt64Values(*ctx.inputs[1], "axes"));
    }
    bool identity;
    ZG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        ReducedAxes(axes, x.rank(), attrs_.noop_with_empty_axes, &identity));
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
