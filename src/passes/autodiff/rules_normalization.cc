// Gradient rules of the ops that normalize along axes: Softmax and LogSoftmax (ONNX, both axis
// semantics), LayerNormalization (ONNX 17) and ONNX Runtime's SimplifiedLayerNormalization (RMS).
// Each backward is one com.microsoft gradient kernel: SoftmaxGrad_13, LogSoftmaxGrad_13,
// LayerNormalizationGrad, SimplifiedLayerNormalizationGrad.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "passes/autodiff/gradient_rule.h"
#include "passes/autodiff/rule_util.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/tensor_spec.h"

namespace zerograph::autodiff {
namespace {

constexpr std::string_view kMicrosoft = "com.microsoft";

// Softmax's and LogSoftmax's backward, `grad_op` along the forward's axis. Before opset 13 a row
// is every dimension from `axis` on (the input coerced to 2-D at `axis`): the same as per axis when
// `axis` is the last, else the gradient runs on the 2-D view and is reshaped back.
Status SoftmaxFamilyGrad(GradientContext& ctx, std::string_view grad_op) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  const Node& node = ctx.node();
  Value* dy = ctx.output_grad(0);
  Value* y = ctx.output(0);
  const int64_t rank = ctx.rank(*y);
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(node, "axis"));
  ZG_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank));
  if (node.contract()->since_version >= 13 || axis == rank - 1) {
    return ctx.SetInputGrad(0, ctx.Op({kMicrosoft, grad_op}, {dy, y}, {Attr("axis", axis)}));
  }
  Value* dy_2d = ctx.Op("Flatten", {dy}, {Attr("axis", axis)});
  Value* y_2d = ctx.Op("Flatten", {y}, {Attr("axis", axis)});
  Value* dx_2d = ctx.Op({kMicrosoft, grad_op}, {dy_2d, y_2d}, {Attr("axis", 1)});
  return ctx.SetInputGrad(0, ctx.Op("Reshape", {dx_2d, ctx.Op("Shape", {y})}));
}

// dX = Y ⊙ (dY − Σ_axis dY ⊙ Y)
Status SoftmaxGrad(GradientContext& ctx) { return SoftmaxFamilyGrad(ctx, "SoftmaxGrad_13"); }

// dX = dY − exp(Y) ⊙ Σ_axis dY
Status LogSoftmaxGrad(GradientContext& ctx) { return SoftmaxFamilyGrad(ctx, "LogSoftmaxGrad_13"); }

// The statistics outputs are saved for the backward, not differentiated.
Status CheckNoStatisticsGrad(GradientContext& ctx) {
  for (size_t i = 1; i < ctx.node().num_outputs(); ++i) {
    ZG_RETURN_IF_NOT(ctx.output_grad(i) == nullptr, "a gradient through the statistics output ", i,
                     " of ", ctx.node().op_type(), " is not supported");
  }
  return Status::Ok();
}

// The normalizations' attributes, which their gradients take too.
struct NormalizationAttrs {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int64_t stash_type = 1;
};

StatusOr<NormalizationAttrs> NormalizationAttrsOf(const Node& node) {
  NormalizationAttrs attrs;
  ZG_ASSIGN_OR_RETURN(attrs.axis, ContractInt(node, "axis"));
  ZG_ASSIGN_OR_RETURN(attrs.epsilon, ContractFloat(node, "epsilon"));
  ZG_ASSIGN_OR_RETURN(attrs.stash_type, ContractInt(node, "stash_type"));
  return attrs;
}

// With x̂ = (X − mean)·inv_std_dev, rows over the dimensions from `axis` on, and g = dY ⊙ Scale:
//   dX = inv_std_dev·(g − mean_row(g) − x̂·mean_row(g ⊙ x̂)),  dScale = Σ_rows dY ⊙ x̂,
//   dB = Σ_rows dY,
// in one LayerNormalizationGrad from the saved (or recomputed) Mean and InvStdDev.
Status LayerNormalizationGrad(GradientContext& ctx) {
  ZG_RETURN_IF_ERROR(CheckNoStatisticsGrad(ctx));
  ZG_ASSIGN_OR_RETURN(const NormalizationAttrs a, NormalizationAttrsOf(ctx.node()));
  const std::initializer_list<Attr> attrs = {Attr("axis", a.axis), Attr("epsilon", a.epsilon),
                                             Attr("stash_type", a.stash_type)};
  Value* dy = ctx.output_grad(0);
  Node* recomputed = nullptr;
  Value* mean = SavedOutput(ctx, 1, attrs, recomputed);
  Value* inv_std_dev = SavedOutput(ctx, 2, attrs, recomputed);
  const std::array<Value*, 5> inputs = {dy, ctx.input(0), ctx.input(1), mean, inv_std_dev};
  Node* grad = ctx.AddNode({kMicrosoft, "LayerNormalizationGrad"}, inputs, 3, attrs);
  if (ctx.needs_grad(0)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(0, grad->output(0)));
  if (ctx.needs_grad(1)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(1, grad->output(1)));
  if (ctx.needs_grad(2)) {
    // The kernel sums dB into Scale's shape; a bias broadcast otherwise sums dY itself.
    const Value& bias = *ctx.input(2);
    const bool like_scale = ctx.type(bias).dims == ctx.type(*ctx.input(1)).dims;
    ZG_RETURN_IF_ERROR(
        ctx.SetInputGrad(2, like_scale ? grad->output(2) : ctx.ReduceToShapeOf(dy, bias)));
  }
  return Status::Ok();
}

// RMS normalization, x̂ = X·inv_std_var and g = dY ⊙ scale:
//   dX = inv_std_var·(g − x̂·mean_row(g ⊙ x̂)),  dscale = Σ_rows dY ⊙ x̂.
Status SimplifiedLayerNormalizationGrad(GradientContext& ctx) {
  ZG_RETURN_IF_ERROR(CheckNoStatisticsGrad(ctx));
  ZG_ASSIGN_OR_RETURN(const NormalizationAttrs a, NormalizationAttrsOf(ctx.node()));
  const std::initializer_list<Attr> attrs = {Attr("axis", a.axis), Attr("epsilon", a.epsilon),
                                             Attr("stash_type", a.stash_type)};
  Node* recomputed = nullptr;
  const std::array<Value*, 4> inputs = {ctx.output_grad(0), ctx.input(0), ctx.input(1),
                                        SavedOutput(ctx, 1, attrs, recomputed)};
  Node* grad = ctx.AddNode({kMicrosoft, "SimplifiedLayerNormalizationGrad"}, inputs, 2, attrs);
  if (ctx.needs_grad(0)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(0, grad->output(0)));
  if (ctx.needs_grad(1)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(1, grad->output(1)));
  return Status::Ok();
}

constexpr GradientRuleEntry kRules[] = {
    {"", "Softmax", SoftmaxGrad},
    {"", "LogSoftmax", LogSoftmaxGrad},
    {"", "LayerNormalization", LayerNormalizationGrad},
    {kMicrosoft, "SimplifiedLayerNormalization", SimplifiedLayerNormalizationGrad},
};

}  // namespace

std::span<const GradientRuleEntry> NormalizationGradientRules() { return kRules; }

}  // namespace zerograph::autodiff
