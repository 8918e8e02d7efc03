// Gradient rules of ONNX's reductions and classification losses. A reduction's gradient is dY
// with the reduced axes restored as 1s (Unsqueeze unless keepdims), times the derivative of the
// reduction, broadcast back to X. The losses' backward is ONNX Runtime's fused
// SoftmaxCrossEntropyLossGrad, whose reductions, ignore_index and weights are ONNX's.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passes/autodiff/gradient_rule.h"
#include "passes/autodiff/rule_util.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/tensor_type.h"

namespace zerograph::autodiff {
namespace {

constexpr std::string_view kMicrosoft = "com.microsoft";

// --- Reductions ---------------------------------------------------------------------------------

// Which axes a reduction node reduces, and how the backward ops take axes.
struct Reduction {
  bool keepdims = true;
  // Opset 13 and later, where Unsqueeze and ReduceSum take their axes as an input: the forward's
  // contract is version 13 or 18 exactly then.
  bool axes_as_input = false;
  // The forward's axes input (the opset-18 form), else its `axes` attribute.
  Value* axes_input = nullptr;
  std::vector<int64_t> axes;
  // No axes: every axis is reduced, or none with noop_with_empty_axes (Y is X).
  bool all = false;
  bool none = false;
};

StatusOr<Reduction> ReductionOf(const GradientContext& ctx) {
  const Node& node = ctx.node();
  Reduction r;
  ZG_ASSIGN_OR_RETURN(int64_t keepdims, ContractInt(node, "keepdims"));
  r.keepdims = keepdims != 0;
  r.axes_as_input = node.contract()->since_version >= 13;
  int64_t noop = 0;
  if (node.contract()->FindAttribute("noop_with_empty_axes") != nullptr) {
    ZG_ASSIGN_OR_RETURN(noop, ContractInt(node, "noop_with_empty_axes"));
  }
  bool empty = true;
  if (node.num_inputs() > 1 && node.input(1) != nullptr) {
    r.axes_input = node.input(1);
    empty = ctx.type(*r.axes_input).numel() == 0;
  } else if (std::optional<std::span<const int64_t>> axes = node.GetInts("axes")) {
    r.axes.assign(axes->begin(), axes->end());
    empty = r.axes.empty();
  }
  r.all = empty && noop == 0;
  r.none = empty && noop != 0;
  return r;
}

// `v` (of Y's shape) with the reduced axes kept as 1s, so that it broadcasts against X.
Value* KeepDims(GradientContext& ctx, const Reduction& r, Value* v) {
  if (r.keepdims) return v;
  if (r.all) {
    const auto rank = static_cast<size_t>(ctx.rank(*ctx.input(0)));
    return ctx.Op("Reshape", {v, ctx.Int64s(std::vector<int64_t>(rank, 1))});
  }
  if (!r.axes_as_input) return ctx.Op("Unsqueeze", {v}, {Attr("axes", r.axes)});
  return ctx.Op("Unsqueeze", {v, r.axes_input ? r.axes_input : ctx.Int64s(r.axes)});
}

// ReduceSum of `v` (of X's shape) over the reduced axes, keeping them.
Value* SumKeepDims(GradientContext& ctx, const Reduction& r, Value* v) {
  if (r.all) return ctx.Op("ReduceSum", {v});
  if (!r.axes_as_input) return ctx.Op("ReduceSum", {v}, {Attr("axes", r.axes)});
  return ctx.Op("ReduceSum", {v, r.axes_input ? r.axes_input : ctx.Int64s(r.axes)});
}

// `v` broadcast to X's shape.
Value* ExpandToX(GradientContext& ctx, Value* v) {
  return ctx.Op("Expand", {v, ctx.Op("Shape", {ctx.input(0)})});
}

Value* ScalarLikeX(GradientContext& ctx, float value) {
  return ctx.Scalar(value, ctx.type(*ctx.input(0)).dtype);
}

// dX from dY with the reduced axes kept (`dy`).
using ReductionDerivative = Value* (*)(GradientContext& ctx, const Reduction& r, Value* dy);

Status ReductionGrad(GradientContext& ctx, ReductionDerivative derivative) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(Reduction r, ReductionOf(ctx));
  // Our kernels pass X through unreduced, whatever the reduction.
  if (r.none) return ctx.SetInputGrad(0, ctx.output_grad(0));
  return ctx.SetInputGrad(0, derivative(ctx, r, KeepDims(ctx, r, ctx.output_grad(0))));
}

// Y with the reduced axes kept.
Value* KeptY(GradientContext& ctx, const Reduction& r) { return KeepDims(ctx, r, ctx.output(0)); }

// dX = dY
Status ReduceSumGrad(GradientContext& ctx) {
  return ReductionGrad(
      ctx, [](GradientContext& ctx, const Reduction&, Value* dy) { return ExpandToX(ctx, dy); });
}

// The elements each element of Y averages: the product of X's dims where `kept` (of Y's shape
// with the reduced axes kept as 1s) differs, or nullopt when one of those is symbolic.
std::optional<int64_t> ReducedCount(const GradientContext& ctx, const Value& kept) {
  const std::optional<std::vector<int64_t>>& x = ctx.type(*ctx.input(0)).dims;
  const std::optional<std::vector<int64_t>>& k = ctx.type(kept).dims;
  if (!x || !k || x->size() != k->size()) return std::nullopt;
  int64_t count = 1;
  for (size_t d = 0; d < x->size(); ++d) {
    if ((*k)[d] == (*x)[d]) continue;
    if ((*x)[d] == TensorType::kUnknownDim) return std::nullopt;
    count *= (*x)[d];
  }
  return count;
}

// dX = dY / n, n the elements reduced into each (Size(X) / Size(Y) when a reduced dim is
// symbolic).
Status ReduceMeanGrad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction&, Value* dy) {
    if (const std::optional<int64_t> n = ReducedCount(ctx, *dy)) {
      return ExpandToX(ctx, ctx.Op("Mul", {dy, ScalarLikeX(ctx, 1.0f / static_cast<float>(*n))}));
    }
    const int64_t dtype = static_cast<int64_t>(ctx.type(*ctx.input(0)).dtype);
    Value* n = ctx.Op(
        "Cast", {ctx.Op("Div", {ctx.Op("Size", {ctx.input(0)}), ctx.Op("Size", {ctx.output(0)})})},
        {Attr("to", dtype)});
    return ExpandToX(ctx, ctx.Op("Div", {dy, n}));
  });
}

// dX = 2·X·dY
Status ReduceSumSquareGrad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction&, Value* dy) {
    return ctx.Op("Mul", {ctx.input(0), ctx.Op("Mul", {dy, ScalarLikeX(ctx, 2.0f)})});
  });
}

// dX = sign(X)·dY
Status ReduceL1Grad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction&, Value* dy) {
    return ctx.Op("Mul", {ctx.Op("Sign", {ctx.input(0)}), dy});
  });
}

// dX = X·dY / Y (NaN where Y = 0, the norm's kink)
Status ReduceL2Grad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction& r, Value* dy) {
    return ctx.Op("Mul", {ctx.input(0), ctx.Op("Div", {dy, KeptY(ctx, r)})});
  });
}

// dX = dY / exp(Y), Y = log Σ X
Status ReduceLogSumGrad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction& r, Value* dy) {
    return ExpandToX(ctx, ctx.Op("Div", {dy, ctx.Op("Exp", {KeptY(ctx, r)})}));
  });
}

// dX = dY·exp(X − Y), the softmax over the reduced axes
Status ReduceLogSumExpGrad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction& r, Value* dy) {
    return ctx.Op("Mul", {dy, ctx.Op("Exp", {ctx.Op("Sub", {ctx.input(0), KeptY(ctx, r)})})});
  });
}

// dX = dY·[X = Y] / #{X = Y}: the positions of the extremum share dY evenly when tied (as
// PyTorch's amax/amin), a subgradient.
Status ReduceExtremumGrad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction& r, Value* dy) {
    const int64_t dtype = static_cast<int64_t>(ctx.type(*ctx.input(0)).dtype);
    Value* at_extremum =
        ctx.Op("Cast", {ctx.Op("Equal", {ctx.input(0), KeptY(ctx, r)})}, {Attr("to", dtype)});
    return ctx.Op("Mul", {at_extremum, ctx.Op("Div", {dy, SumKeepDims(ctx, r, at_extremum)})});
  });
}

// dX = dY·Y / X: exact where X has no zero (a zero makes it NaN or infinite).
Status ReduceProdGrad(GradientContext& ctx) {
  return ReductionGrad(ctx, [](GradientContext& ctx, const Reduction& r, Value* dy) {
    return ctx.Op("Div", {ctx.Op("Mul", {dy, KeptY(ctx, r)}), ctx.input(0)});
  });
}

// --- Losses -------------------------------------------------------------------------------------

// The losses' attributes. Only `reduction` changes a shape, so only it is given where a node is
// made (shape inference runs then); ignore_index is set after.
struct LossAttrs {
  std::string reduction;
  std::optional<int64_t> ignore_index;

  void SetIgnoreIndex(Node& node) const {
    if (ignore_index) node.SetInt("ignore_index", *ignore_index);
  }
};

StatusOr<LossAttrs> LossAttrsOf(const Node& node) {
  LossAttrs attrs;
  ZG_ASSIGN_OR_RETURN(attrs.reduction, ContractString(node, "reduction"));
  attrs.ignore_index = node.GetInt("ignore_index");
  return attrs;
}

// SoftmaxCrossEntropyLossGrad with the forward's reduction and ignore_index:
//   d_scores[n, c, d...] = dY'·w[label]·(exp(log_prob) − [c = label]), 0 where label is ignored,
// with dY' = dY per sample (none), dY (sum), or dY / Σ w[label] over the samples not ignored
// (mean). (Without ignore_index the kernel ignores label −1, which ONNX's losses refuse.)
Value* LossGrad(GradientContext& ctx, const LossAttrs& attrs, Value* dloss, Value* log_prob) {
  std::vector<Value*> inputs = {dloss, log_prob, ctx.input(1)};
  if (Value* weights = ctx.input(2)) inputs.push_back(weights);
  Node* grad = ctx.AddNode({kMicrosoft, "SoftmaxCrossEntropyLossGrad"}, inputs, 1,
                           {Attr("reduction", attrs.reduction)});
  attrs.SetIgnoreIndex(*grad);
  return grad->output(0);
}

// Scores [N, C, d1...] get the loss's gradient and, when the graph reads log_prob, its
// LogSoftmax gradient along C. Labels and weights get none.
Status SoftmaxCrossEntropyLossGrad(GradientContext& ctx) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(const LossAttrs attrs, LossAttrsOf(ctx.node()));
  Node* recomputed = nullptr;
  Value* log_prob = SavedOutput(ctx, 1, {Attr("reduction", attrs.reduction)}, recomputed);
  if (recomputed != nullptr) attrs.SetIgnoreIndex(*recomputed);
  Value* dscores = nullptr;
  if (Value* dloss = ctx.output_grad(0)) dscores = LossGrad(ctx, attrs, dloss, log_prob);
  if (Value* dlog_prob = ctx.output_grad(1)) {
    Value* d = ctx.Op({kMicrosoft, "LogSoftmaxGrad_13"}, {dlog_prob, log_prob}, {Attr("axis", 1)});
    dscores = dscores != nullptr ? ctx.Op("Add", {dscores, d}) : d;
  }
  return ctx.SetInputGrad(0, dscores);
}

// NegativeLogLikelihoodLoss is SoftmaxCrossEntropyLoss on log-probabilities without the softmax,
// so its gradient is LossGrad's with exp(log_prob) = 0: log_prob = −∞ leaves
//   d_input[n, c, d...] = −dY'·w[target]·[c = target].
Status NegativeLogLikelihoodLossGrad(GradientContext& ctx) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(const LossAttrs attrs, LossAttrsOf(ctx.node()));
  Value* no_softmax = ExpandToX(ctx, ScalarLikeX(ctx, -std::numeric_limits<float>::infinity()));
  return ctx.SetInputGrad(0, LossGrad(ctx, attrs, ctx.output_grad(0), no_softmax));
}

constexpr GradientRuleEntry kRules[] = {
    {"", "ReduceSum", ReduceSumGrad},
    {"", "ReduceMean", ReduceMeanGrad},
    {"", "ReduceSumSquare", ReduceSumSquareGrad},
    {"", "ReduceL1", ReduceL1Grad},
    {"", "ReduceL2", ReduceL2Grad},
    {"", "ReduceLogSum", ReduceLogSumGrad},
    {"", "ReduceLogSumExp", ReduceLogSumExpGrad},
    {"", "ReduceMax", ReduceExtremumGrad},
    {"", "ReduceMin", ReduceExtremumGrad},
    {"", "ReduceProd", ReduceProdGrad},
    {"", "SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLossGrad},
    {"", "NegativeLogLikelihoodLoss", NegativeLogLikelihoodLossGrad},
};

}  // namespace

std::span<const GradientRuleEntry> ReductionLossGradientRules() { return kRules; }

}  // namespace zerograph::autodiff
