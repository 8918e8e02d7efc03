#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_OPTIMIZER_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_OPTIMIZER_SHAPES_H_

// Attributes and shape inference of org.zerograph AdamW and SGD (DESIGN §4), shared by every
// device: a backend derives its kernel from these bases and implements only ComputeImpl.
//   AdamW(lr, step, X1..Xn, G1..Gn, M1..Mn, V1..Vn) -> (X1'..Xn', M1'..Mn', V1'..Vn')
//   SGD(lr, X1..Xn, G1..Gn) -> (X1'..Xn')
// lr is a float scalar, step an int64 scalar; each output may run in place over its input.

#include <span>
#include <string_view>
#include <vector>

#include "runtime/kernels/adamw_coefficients.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// The scalar inputs every optimizer starts with.
inline Status CheckScalar(const TensorSpec* spec, DataType dtype, std::string_view what) {
  ZG_RETURN_IF_NOT(spec != nullptr, what, " is missing");
  ZG_RETURN_IF_NOT(spec->dtype == dtype && NumElements(spec->shape) == 1, what, " must be a ",
                   DataTypeName(dtype), " scalar, got ", DataTypeName(spec->dtype),
                   ShapeToString(spec->shape));
  return Status::Ok();
}

// Checks groups of n tensors starting at input `first` (X, then G, then the states) against the
// X of the same index, and returns one output per X per `output_groups`, in place over the
// matching input group.
inline StatusOr<std::vector<OutputInfo>> InferUpdateOutputs(const ShapeContext& ctx, DataType dtype,
                                                            size_t first, size_t n, size_t groups,
                                                            std::span<const size_t> output_groups) {
  for (size_t i = 0; i < n; ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, first + i));
    ZG_RETURN_IF_NOT(x->dtype == dtype, "X", i + 1, " is ", DataTypeName(x->dtype), ", expected ",
                     DataTypeName(dtype));
    for (size_t group = 1; group < groups; ++group) {
      const size_t index = first + group * n + i;
      ZG_ASSIGN_OR_RETURN(const TensorSpec* other, RequiredInput(ctx, index));
      ZG_RETURN_IF_NOT(*other == *x, "input ", index, " is ", DataTypeName(other->dtype),
                       ShapeToString(other->shape), " but X", i + 1, " is ", DataTypeName(x->dtype),
                       ShapeToString(x->shape));
    }
  }
  std::vector<OutputInfo> outputs;
  for (size_t group : output_groups) {
    for (size_t i = 0; i < n; ++i) {
      const int input = static_cast<int>(first + group * n + i);
      outputs.push_back(OutputInfo{*ctx.input(static_cast<size_t>(input)), std::nullopt, input});
    }
  }
  return outputs;
}

// AdamW's tensors per group and its constant scalars (lr and step come per run).
struct AdamWAttrs {
  size_t n = 0;
  AdamWScalars scalars;
};

class AdamWKernelBase : public OpKernel {
 public:
  static StatusOr<AdamWAttrs> ParseAttrs(const KernelInfo& info) {
    const Node& node = *info.node;
    const size_t inputs = node.num_inputs();
    ZG_RETURN_IF_NOT(inputs >= 6 && (inputs - 2) % 4 == 0,
                     "expects lr, step and 4 groups of n tensors, got ", inputs, " inputs");
    AdamWAttrs attrs;
    attrs.n = (inputs - 2) / 4;
    ZG_RETURN_IF_NOT(node.num_outputs() == 3 * attrs.n, "expects ", 3 * attrs.n, " outputs, got ",
                     node.num_outputs());
    AdamWScalars& s = attrs.scalars;
    ZG_ASSIGN_OR_RETURN(s.beta1, FloatAttr(node, "beta1", 0.9f));
    ZG_ASSIGN_OR_RETURN(s.beta2, FloatAttr(node, "beta2", 0.999f));
    ZG_ASSIGN_OR_RETURN(s.epsilon, FloatAttr(node, "epsilon", 1e-8f));
    ZG_ASSIGN_OR_RETURN(s.weight_decay, FloatAttr(node, "weight_decay", 0.01f));
    return attrs;
  }
  AdamWKernelBase(const KernelInfo& info, AdamWAttrs attrs)
      : OpKernel(info), n_(attrs.n), scalars_(attrs.scalars) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckScalar(ctx.input(0), DataType::kFloat32, "lr"));
    ZG_RETURN_IF_ERROR(CheckScalar(ctx.input(1), DataType::kInt64, "step"));
    const size_t groups[] = {0, 2, 3};  // X', M', V'
    return InferUpdateOutputs(ctx, dtype(), 2, n_, 4, groups);
  }

  // The step's scalars: the attributes with lr and step read from inputs 0 and 1 (host memory).
  StatusOr<AdamWScalars> StepScalars(const KernelContext& ctx) const {
    AdamWScalars s = scalars_;
    s.lr = *ctx.inputs[0]->data_as<const float>();
    s.step = *ctx.inputs[1]->data_as<const int64_t>();
    ZG_RETURN_IF_NOT(s.step >= 1, "step must count updates from 1, got ", s.step);
    return s;
  }

  const size_t n_;
  const AdamWScalars scalars_;
};

class SgdKernelBase : public OpKernel {
 public:
  // The number of tensors per group.
  static StatusOr<size_t> ParseAttrs(const KernelInfo& info) {
    const size_t inputs = info.node->num_inputs();
    ZG_RETURN_IF_NOT(inputs >= 3 && (inputs - 1) % 2 == 0,
                     "expects lr and 2 groups of n tensors, got ", inputs, " inputs");
    const size_t n = (inputs - 1) / 2;
    ZG_RETURN_IF_NOT(info.node->num_outputs() == n, "expects ", n, " outputs, got ",
                     info.node->num_outputs());
    return n;
  }
  SgdKernelBase(const KernelInfo& info, size_t n) : OpKernel(info), n_(n) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckScalar(ctx.input(0), DataType::kFloat32, "lr"));
    const size_t groups[] = {0};
    return InferUpdateOutputs(ctx, dtype(), 1, n_, 2, groups);
  }

  const size_t n_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_OPTIMIZER_SHAPES_H_
