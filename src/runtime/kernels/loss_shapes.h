#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_LOSS_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_LOSS_SHAPES_H_

// What the loss kernels share on every device: the attributes of SoftmaxCrossEntropyLoss,
// NegativeLogLikelihoodLoss and ONNX Runtime's loss ops (reduction, ignore_index from the
// attribute or, for the Internal ops, a host input), and the [N, C, D] view of the scores.

#include <optional>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/loss_reduction.h"

namespace zerograph::runtime {

struct LossAttrs {
  LossReduction reduction = LossReduction::kMean;
  // From the attribute (-1 for com.microsoft's ops without one); the Internal ops take it from
  // input `ignore_index_input` when the node has it.
  std::optional<int64_t> ignore_index;
  int ignore_index_input = -1;
};

// Scores [N, C, d1, ...] as [N, C, D]: element (n, c, d) at (n·C + c)·D + d.
struct LossDims {
  int64_t n = 0, c = 0, d = 1;
  int64_t samples() const { return n * d; }
};
inline LossDims LossDimsOf(const Shape& scores) {
  LossDims dims{scores[0], scores[1], 1};
  for (size_t i = 2; i < scores.size(); ++i) dims.d *= scores[i];
  return dims;
}

class LossKernelBase : public OpKernel {
 public:
  static StatusOr<LossAttrs> ParseAttrs(const KernelInfo& info) {
    LossAttrs attrs;
    ZG_ASSIGN_OR_RETURN(std::string reduction, ContractString(*info.node, "reduction"));
    if (reduction == "none") {
      attrs.reduction = LossReduction::kNone;
    } else if (reduction == "sum") {
      attrs.reduction = LossReduction::kSum;
    } else {
      ZG_RETURN_IF_NOT(reduction == "mean", "reduction '", reduction, "' is not none, sum or mean");
    }
    if (info.node->HasAttribute("ignore_index")) {
      ZG_ASSIGN_OR_RETURN(attrs.ignore_index, ContractInt(*info.node, "ignore_index"));
    } else if (info.contract->domain == "com.microsoft") {
      // ONNX Runtime's loss kernels ignore label -1 unless told otherwise; ONNX's ops ignore none.
      attrs.ignore_index = -1;
    }
    for (size_t i = 0; i < info.contract->inputs.size(); ++i) {
      if (info.contract->inputs[i].name == "ignore_index") {
        attrs.ignore_index_input = static_cast<int>(i);
      }
    }
    return attrs;
  }
  LossKernelBase(const KernelInfo& info, LossAttrs attrs) : OpKernel(info), attrs_(attrs) {}

 protected:
  // The ignored label of this run: the attribute, or the Internal ops' host input.
  StatusOr<std::optional<int64_t>> IgnoreIndex(const KernelContext& ctx) const {
    const auto index = static_cast<size_t>(attrs_.ignore_index_input);
    if (attrs_.ignore_index_input < 0 || index >= ctx.inputs.size() ||
        ctx.inputs[index] == nullptr) {
      return attrs_.ignore_index;
    }
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                        ReadInt64Values(*ctx.inputs[index], "ignore_index"));
    ZG_RETURN_IF_NOT(values.size() == 1, "ignore_index must hold one value");
    return std::optional<int64_t>(values[0]);
  }

  const LossAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_LOSS_SHAPES_H_
