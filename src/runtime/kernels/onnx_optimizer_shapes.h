#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ONNX_OPTIMIZER_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ONNX_OPTIMIZER_SHAPES_H_

// Attributes of ONNX's ai.onnx.preview.training Adam, Momentum and Adagrad
// (version 1), shared by every device: a backend derives its kernels from OnnxOptimizerKernelBase
// and implements only ComputeImpl. Inputs R (float or double scalar), T (int64 scalar), then all
// X, all G, then the states; outputs X' and the new states, each in place over its input.

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// R as a double, whichever floating type it has (host memory).
inline double ReadRate(const DeviceTensor& r) {
  return r.dtype() == DataType::kFloat64 ? *r.data_as<const double>()
                                         : static_cast<double>(*r.data_as<const float>());
}

// Adam's rate for step T: R·√(1−β^T)/(1−α^T) when T > 0, else R (in double, as ONNX's reference).
inline double AdamStepRate(double r, int64_t t, double alpha, double beta) {
  return t > 0 ? r * std::sqrt(1 - std::pow(beta, static_cast<double>(t))) /
                     (1 - std::pow(alpha, static_cast<double>(t)))
               : r;
}

// Adagrad's rate for step T: R / (1 + T·decay_factor).
inline double AdagradRate(double r, int64_t t, float decay) {
  return r / (1 + static_cast<double>(t) * decay);
}

struct AdamAttrs {
  float alpha = 0, beta = 0, epsilon = 0, norm = 0, norm_post = 0;
};
inline StatusOr<AdamAttrs> ParseAdamAttrs(const Node& node) {
  AdamAttrs a;
  ZG_ASSIGN_OR_RETURN(a.alpha, ContractFloat(node, "alpha"));
  ZG_ASSIGN_OR_RETURN(a.beta, ContractFloat(node, "beta"));
  ZG_ASSIGN_OR_RETURN(a.epsilon, ContractFloat(node, "epsilon"));
  ZG_ASSIGN_OR_RETURN(a.norm, ContractFloat(node, "norm_coefficient"));
  ZG_ASSIGN_OR_RETURN(a.norm_post, ContractFloat(node, "norm_coefficient_post"));
  return a;
}

struct MomentumAttrs {
  float alpha = 0, beta = 0, norm = 0;
  bool nesterov = false;
};
inline StatusOr<MomentumAttrs> ParseMomentumAttrs(const Node& node) {
  MomentumAttrs a;
  // All four attributes are required by the schema.
  ZG_ASSIGN_OR_RETURN(a.alpha, ContractFloat(node, "alpha"));
  ZG_ASSIGN_OR_RETURN(a.beta, ContractFloat(node, "beta"));
  ZG_ASSIGN_OR_RETURN(a.norm, ContractFloat(node, "norm_coefficient"));
  // Compared through the StatusOr: GCC 12 at -O3 wrongly calls a moved-into string uninitialized.
  const StatusOr<std::string> mode = ContractString(node, "mode");
  if (!mode.ok()) return mode.status();
  ZG_RETURN_IF_NOT(*mode == "standard" || *mode == "nesterov", "mode '", *mode,
                   "' (expected 'standard' or 'nesterov')");
  a.nesterov = *mode == "nesterov";
  return a;
}

struct AdagradAttrs {
  float decay = 0, epsilon = 0, norm = 0;
};
inline StatusOr<AdagradAttrs> ParseAdagradAttrs(const Node& node) {
  AdagradAttrs a;
  ZG_ASSIGN_OR_RETURN(a.decay, ContractFloat(node, "decay_factor"));
  ZG_ASSIGN_OR_RETURN(a.epsilon, ContractFloat(node, "epsilon"));
  ZG_ASSIGN_OR_RETURN(a.norm, ContractFloat(node, "norm_coefficient"));
  return a;
}

// The common frame: n tensors per group after R and T (the contract's layout), outputs of groups
// {0, 2, 3, ...} (X' and the new states), each in place over its input.
class OnnxOptimizerKernelBase : public OpKernel {
 protected:
  OnnxOptimizerKernelBase(const KernelInfo& info, size_t n) : OpKernel(info), n_(n) {}

  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    UpdateInPlace(*contract()->optimizer, outputs);
    return Status::Ok();
  }
  const size_t n_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ONNX_OPTIMIZER_SHAPES_H_
