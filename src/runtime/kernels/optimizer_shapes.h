#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_OPTIMIZER_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_OPTIMIZER_SHAPES_H_

// Attributes of org.zerograph AdamW and SGD (docs/formats.md), shared by every device: a backend
// derives its kernel from these bases and implements only ComputeImpl.
//   AdamW(lr, step, X1..Xn, G1..Gn, M1..Mn, V1..Vn[, control]) -> (X1'..Xn', M1'..Mn', V1'..Vn')
//   SGD(lr, X1..Xn, G1..Gn[, control]) -> (X1'..Xn')
// lr is a float scalar, step an int64 scalar; each output may run in place over its input. The
// optional control is fp32[3] in the tensors' memory: every gradient element is multiplied by
// control[0], and control[1] != 0 skips the update (each output equals its input). Shapes are the
// op contracts'.

#include <span>
#include <string_view>
#include <vector>

#include "runtime/kernels/adamw_coefficients.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// AdamW's tensors per group and its constant scalars (lr and step come per run).
struct AdamWAttrs {
  size_t n = 0;
  AdamWScalars scalars;
};

// Whether the optimizer node has its optional control input.
inline bool HasControl(const KernelInfo& info) {
  return info.contract->optimizer->HasControl(info.node->num_inputs(), info.node->num_outputs());
}

class AdamWKernelBase : public OpKernel {
 public:
  static StatusOr<AdamWAttrs> ParseAttrs(const KernelInfo& info) {
    const Node& node = *info.node;
    AdamWAttrs attrs;
    attrs.n = OptimizerParams(info);
    AdamWScalars& s = attrs.scalars;
    ZG_ASSIGN_OR_RETURN(s.beta1, ContractFloat(node, "beta1"));
    ZG_ASSIGN_OR_RETURN(s.beta2, ContractFloat(node, "beta2"));
    ZG_ASSIGN_OR_RETURN(s.epsilon, ContractFloat(node, "epsilon"));
    ZG_ASSIGN_OR_RETURN(s.weight_decay, ContractFloat(node, "weight_decay"));
    ZG_ASSIGN_OR_RETURN(const int64_t mode, ContractInt(node, "adam_mode"));
    ZG_ASSIGN_OR_RETURN(const int64_t correct_bias, ContractInt(node, "correct_bias"));
    s.mode = static_cast<AdamMode>(mode);  // the contract's check admits 0 and 1 only
    s.correct_bias = correct_bias != 0;
    return attrs;
  }
  AdamWKernelBase(const KernelInfo& info, AdamWAttrs attrs)
      : OpKernel(info), n_(attrs.n), scalars_(attrs.scalars), control_(HasControl(info)) {}

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    UpdateInPlace(*contract()->optimizer, outputs);
    return Status::Ok();
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
  // Whether the node has the control input (its last).
  const bool control_;
};

class SgdKernelBase : public OpKernel {
 public:
  // The number of tensors per group.
  static StatusOr<size_t> ParseAttrs(const KernelInfo& info) { return OptimizerParams(info); }
  SgdKernelBase(const KernelInfo& info, size_t n)
      : OpKernel(info), n_(n), control_(HasControl(info)) {}

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    UpdateInPlace(*contract()->optimizer, outputs);
    return Status::Ok();
  }
  const size_t n_;
  // Whether the node has the control input (its last).
  const bool control_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_OPTIMIZER_SHAPES_H_
