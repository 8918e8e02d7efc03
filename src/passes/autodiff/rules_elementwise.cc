// Gradient rules of the element-wise ops: activations, arithmetic with broadcasting, the variadic
// ops, Where, Clip, Cast and Dropout. One fused com.microsoft gradient op where the op library
// has one (ReluGrad, SigmoidGrad, TanhGrad, GeluGrad, FastGeluGrad, DivGrad, DropoutGrad): one
// pass over memory instead of two or three. Integer operands never need a gradient (the sweep's
// needs_grad says so), so no rule checks dtypes.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passes/autodiff/gradient_rule.h"
#include "zerograph/core/hash.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

DataType DtypeOf(const GradientContext& ctx, const Value& value) { return ctx.type(value).dtype; }

Value* Zero(GradientContext& ctx, const Value& like) {
  return ctx.Scalar(0.0f, DtypeOf(ctx, like));
}

// Records dL/d input i = `grad` summed back over the axes input i was broadcast along.
Status SetReducedGrad(GradientContext& ctx, size_t i, Value* grad) {
  return ctx.SetInputGrad(i, ctx.ReduceToShapeOf(grad, *ctx.input(i)));
}

// dX = op(dY, saved) by one com.microsoft gradient op (ReluGrad, SigmoidGrad, ...); `saved` is
// the forward input X or output Y, as the op's schema says.
Status FusedGrad(GradientContext& ctx, std::string_view op, Value* saved) {
  return ctx.SetInputGrad(0, ctx.Op({kMicrosoftDomain, op}, {ctx.output_grad(0), saved}));
}

// --- One input.

// Every input gets dY, summed back over its broadcast axes: Identity, Add, Sum.
Status PassThroughGrad(GradientContext& ctx) {
  for (size_t i = 0; i < ctx.node().num_inputs(); ++i) {
    if (ctx.needs_grad(i)) ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, i, ctx.output_grad(0)));
  }
  return Status::Ok();
}

Status NegGrad(GradientContext& ctx) {
  return ctx.SetInputGrad(0, ctx.Op("Neg", {ctx.output_grad(0)}));
}

// d|x| = sign(x).
Status AbsGrad(GradientContext& ctx) {
  Value* sign = ctx.Op("Sign", {ctx.input(0)});
  return ctx.SetInputGrad(0, ctx.Op("Mul", {ctx.output_grad(0), sign}));
}

// ReluGrad reads Y rather than X (Y > 0 exactly where X > 0): the next op usually saves Y anyway.
Status ReluGrad(GradientContext& ctx) { return FusedGrad(ctx, "ReluGrad", ctx.output(0)); }

// dX = dY where X > 0, else alpha·dY.
Status LeakyReluGrad(GradientContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const float alpha, ContractFloat(ctx.node(), "alpha"));
  Value* x = ctx.input(0);
  Value* dy = ctx.output_grad(0);
  Value* positive = ctx.Op("Greater", {x, Zero(ctx, *x)});
  Value* scaled = ctx.Op("Mul", {dy, ctx.Scalar(alpha, DtypeOf(ctx, *x))});
  return ctx.SetInputGrad(0, ctx.Op("Where", {positive, dy, scaled}));
}

// d exp(x) = exp(x) = Y.
Status ExpGrad(GradientContext& ctx) {
  return ctx.SetInputGrad(0, ctx.Op("Mul", {ctx.output_grad(0), ctx.output(0)}));
}

// d log(x) = 1/x.
Status LogGrad(GradientContext& ctx) {
  return ctx.SetInputGrad(0, ctx.Op("Div", {ctx.output_grad(0), ctx.input(0)}));
}

// d √x = 1/(2·Y).
Status SqrtGrad(GradientContext& ctx) {
  Value* y = ctx.output(0);
  Value* quotient = ctx.Op("Div", {ctx.output_grad(0), y});
  return ctx.SetInputGrad(0, ctx.Op("Mul", {quotient, ctx.Scalar(0.5f, DtypeOf(ctx, *y))}));
}

// d (1/x) = -1/x² = -Y².
Status ReciprocalGrad(GradientContext& ctx) {
  Value* y = ctx.output(0);
  Value* scaled = ctx.Op("Mul", {ctx.output_grad(0), ctx.Op("Mul", {y, y})});
  return ctx.SetInputGrad(0, ctx.Op("Neg", {scaled}));
}

// d erf(x) = 2/√π · exp(-x²) = exp(ln(2/√π) - x²): the factor folded into the exponent.
Status ErfGrad(GradientContext& ctx) {
  Value* x = ctx.input(0);
  const auto log_factor = static_cast<float>(std::log(2.0 * std::numbers::inv_sqrtpi));
  Value* exponent =
      ctx.Op("Sub", {ctx.Scalar(log_factor, DtypeOf(ctx, *x)), ctx.Op("Mul", {x, x})});
  return ctx.SetInputGrad(0, ctx.Op("Mul", {ctx.output_grad(0), ctx.Op("Exp", {exponent})}));
}

// d sin(x) = cos(x) = sin(x + π/2): the op library has no Cos.
Status SinGrad(GradientContext& ctx) {
  Value* x = ctx.input(0);
  Value* shifted = ctx.Op("Add", {x, ctx.Scalar(std::numbers::pi_v<float> / 2, DtypeOf(ctx, *x))});
  return ctx.SetInputGrad(0, ctx.Op("Mul", {ctx.output_grad(0), ctx.Op("Sin", {shifted})}));
}

// From Y: dX = dY·Y·(1 - Y) and dY·(1 - Y²).
Status SigmoidGrad(GradientContext& ctx) { return FusedGrad(ctx, "SigmoidGrad", ctx.output(0)); }
Status TanhGrad(GradientContext& ctx) { return FusedGrad(ctx, "TanhGrad", ctx.output(0)); }

// GeluGrad for the exact form (x·Φ(x)), FastGeluGrad for the tanh form.
Status GeluGrad(GradientContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const std::string approximate, ContractString(ctx.node(), "approximate"));
  return FusedGrad(ctx, approximate == "tanh" ? "FastGeluGrad" : "GeluGrad", ctx.input(0));
}

// Clip passes dY where it did not clamp: X == Y (a bound counts as inside). The bounds (Clip-11's
// inputs 1 and 2) get no gradient.
Status ClipGrad(GradientContext& ctx) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  Value* x = ctx.input(0);
  Value* inside = ctx.Op("Equal", {x, ctx.output(0)});
  return ctx.SetInputGrad(0, ctx.Op("Where", {inside, ctx.output_grad(0), Zero(ctx, *x)}));
}

// The gradient flows back in the input's dtype; an integer input needs none, nor does CastLike's
// target_type.
Status CastGrad(GradientContext& ctx) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  const auto to = static_cast<int64_t>(DtypeOf(ctx, *ctx.input(0)));
  return ctx.SetInputGrad(0, ctx.Op("Cast", {ctx.output_grad(0)}, {Attr("to", to)}));
}

// Dropout before opset 12 runs as the identity (it has no training mode), as does Dropout-12
// without a training_mode input. Otherwise dX = dY·mask/(1 - ratio): DropoutGrad with the forward
// mask, or, when the node does not output one, a Dropout of dY with the forward node's seed, which
// draws the same mask (it hashes seed, step, rank and element index; runtime/kernels/
// dropout_mask.h) and saves keeping one.
Status DropoutGrad(GradientContext& ctx) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  const Node& node = ctx.node();
  const bool training_input = node.num_inputs() > 2 && node.input(2) != nullptr;
  if (node.contract() == nullptr || node.contract()->since_version < 12 || !training_input) {
    return ctx.SetInputGrad(0, ctx.output_grad(0));
  }
  if (node.num_outputs() > 1 && node.output(1) != nullptr) {
    Value* inputs[] = {ctx.output_grad(0), node.output(1), node.input(1), node.input(2)};
    Node* grad = ctx.AddNode({kMicrosoftDomain, "DropoutGrad"}, inputs, 1);
    return ctx.SetInputGrad(0, grad->output(0));
  }
  // The kernel's seed when the attribute is absent (runtime/kernels/dropout_shapes.h).
  const int64_t seed =
      node.GetInt("seed").value_or(static_cast<int64_t>(Fnv1a64(node.output(0)->name())));
  Value* inputs[] = {ctx.output_grad(0), node.input(1), node.input(2)};
  Node* grad = ctx.AddNode("Dropout", inputs, 1, {Attr("seed", seed)});
  return ctx.SetInputGrad(0, grad->output(0));
}

// com.microsoft Scale: Y = X·s (or X/s with scale_down), linear in X; s gets no gradient.
Status ScaleGrad(GradientContext& ctx) {
  if (!ctx.needs_grad(0)) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(const int64_t scale_down, ContractInt(ctx.node(), "scale_down"));
  return ctx.SetInputGrad(0, ctx.Op({kMicrosoftDomain, "Scale"}, {ctx.output_grad(0), ctx.input(1)},
                                    {Attr("scale_down", scale_down)}));
}

// --- Arithmetic, each gradient summed back over its input's broadcast axes.

// C = A - B: dA = dC, dB = -dC (negated after the reduction, on fewer elements).
Status SubGrad(GradientContext& ctx) {
  Value* dc = ctx.output_grad(0);
  if (ctx.needs_grad(0)) ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, 0, dc));
  if (!ctx.needs_grad(1)) return Status::Ok();
  return ctx.SetInputGrad(1, ctx.Op("Neg", {ctx.ReduceToShapeOf(dc, *ctx.input(1))}));
}

// C = A·B: dA = dC·B, dB = dC·A.
Status MulGrad(GradientContext& ctx) {
  Value* dc = ctx.output_grad(0);
  for (size_t i : {0, 1}) {
    if (ctx.needs_grad(i)) {
      ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, i, ctx.Op("Mul", {dc, ctx.input(1 - i)})));
    }
  }
  return Status::Ok();
}

// C = A/B: dA = dC/B, dB = -dC·A/B², both reduced over the broadcast axes by one DivGrad.
Status DivGrad(GradientContext& ctx) {
  const bool need_b = ctx.needs_grad(1);
  Value* inputs[] = {ctx.output_grad(0), ctx.input(0), ctx.input(1)};
  Node* grad = ctx.AddNode({kMicrosoftDomain, "DivGrad"}, inputs, need_b ? 2 : 1);
  if (ctx.needs_grad(0)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(0, grad->output(0)));
  return need_b ? ctx.SetInputGrad(1, grad->output(1)) : Status::Ok();
}

// The value of a one-element float32 or int64 initializer, else nullopt.
std::optional<double> ScalarConstant(const Value& value) {
  const Tensor* tensor = value.initializer();
  if (tensor == nullptr || tensor->numel() != 1) return std::nullopt;
  StatusOr<std::span<const std::byte>> bytes = tensor->Bytes();
  if (!bytes.ok()) return std::nullopt;
  if (tensor->dtype() == DataType::kFloat32) {
    float v;
    std::memcpy(&v, bytes->data(), sizeof v);
    return v;
  }
  if (tensor->dtype() == DataType::kInt64) {
    int64_t v;
    std::memcpy(&v, bytes->data(), sizeof v);
    return static_cast<double>(v);
  }
  return std::nullopt;
}

// dZ·Y·X^(Y-1) for Z = X^Y. A constant exponent c (x² in a decomposed LayerNorm) folds into
// dZ·(c·X^(c-1)), X^(c-1) being X itself for c = 2; Pow-12's integer exponent is cast to X's dtype.
Value* PowBaseGrad(GradientContext& ctx, Value* dz, Value* x, Value* y) {
  const DataType x_dtype = DtypeOf(ctx, *x);
  const DataType y_dtype = DtypeOf(ctx, *y);
  if (const std::optional<double> c = ScalarConstant(*y)) {
    Value* power =
        *c == 2.0 ? x : ctx.Op("Pow", {x, ctx.Scalar(static_cast<float>(*c - 1), x_dtype)});
    return ctx.Op("Mul", {dz, ctx.Op("Mul", {power, ctx.Scalar(static_cast<float>(*c), x_dtype)})});
  }
  Value* power = ctx.Op("Pow", {x, ctx.Op("Sub", {y, ctx.Scalar(1.0f, y_dtype)})});
  Value* factor =
      y_dtype == x_dtype ? y : ctx.Op("Cast", {y}, {Attr("to", static_cast<int64_t>(x_dtype))});
  return ctx.Op("Mul", {dz, ctx.Op("Mul", {power, factor})});
}

// Z = X^Y: dX = dZ·Y·X^(Y-1), dY = dZ·Z·ln X (an integer exponent needs none).
Status PowGrad(GradientContext& ctx) {
  Value* x = ctx.input(0);
  Value* y = ctx.input(1);
  Value* dz = ctx.output_grad(0);
  if (ctx.needs_grad(0)) ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, 0, PowBaseGrad(ctx, dz, x, y)));
  if (!ctx.needs_grad(1)) return Status::Ok();
  Value* grad = ctx.Op("Mul", {dz, ctx.Op("Mul", {ctx.output(0), ctx.Op("Log", {x})})});
  const DataType y_dtype = DtypeOf(ctx, *y);
  if (y_dtype != DtypeOf(ctx, *x)) {
    grad = ctx.Op("Cast", {grad}, {Attr("to", static_cast<int64_t>(y_dtype))});
  }
  return SetReducedGrad(ctx, 1, grad);
}

// --- Several inputs.

// Mean of n inputs: each gets dY/n.
Status MeanGrad(GradientContext& ctx) {
  const size_t n = ctx.node().num_inputs();
  Value* scaled = ctx.Op("Mul", {ctx.output_grad(0), ctx.Scalar(1.0f / static_cast<float>(n),
                                                                DtypeOf(ctx, *ctx.output(0)))});
  for (size_t i = 0; i < n; ++i) {
    if (ctx.needs_grad(i)) ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, i, scaled));
  }
  return Status::Ok();
}

// Max and Min: dY goes to the input that gave Y. On ties the first such input takes it all, so
// the inputs' gradients still sum to dY: input i wins where X_i == Y and no earlier input won;
// the last input wins wherever no earlier one did.
Status MaxMinGrad(GradientContext& ctx) {
  const size_t n = ctx.node().num_inputs();
  size_t last_needed = n;
  for (size_t i = 0; i < n; ++i) {
    if (ctx.needs_grad(i)) last_needed = i;
  }
  if (last_needed == n) return Status::Ok();
  Value* y = ctx.output(0);
  Value* dy = ctx.output_grad(0);
  Value* zero = Zero(ctx, *y);
  Value* taken = nullptr;  // where an earlier input won
  for (size_t i = 0; i <= last_needed; ++i) {
    Value* wins;
    if (taken == nullptr) {
      wins = ctx.Op("Equal", {ctx.input(i), y});
    } else if (i + 1 == n) {
      wins = ctx.Op("Not", {taken});
    } else {
      wins = ctx.Op("And", {ctx.Op("Equal", {ctx.input(i), y}), ctx.Op("Not", {taken})});
    }
    if (ctx.needs_grad(i)) {
      ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, i, ctx.Op("Where", {wins, dy, zero})));
    }
    if (i < last_needed) taken = taken == nullptr ? wins : ctx.Op("Or", {taken, wins});
  }
  return Status::Ok();
}

// Where(C, X, Y): dX = dY where C, dY = dY where not C; the condition gets none.
Status WhereGrad(GradientContext& ctx) {
  Value* condition = ctx.input(0);
  Value* dy = ctx.output_grad(0);
  Value* zero = Zero(ctx, *ctx.output(0));
  if (ctx.needs_grad(1)) {
    ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, 1, ctx.Op("Where", {condition, dy, zero})));
  }
  if (ctx.needs_grad(2)) {
    ZG_RETURN_IF_ERROR(SetReducedGrad(ctx, 2, ctx.Op("Where", {condition, zero, dy})));
  }
  return Status::Ok();
}

constexpr GradientRuleEntry kRules[] = {
    {"", "Identity", PassThroughGrad},
    {"", "Neg", NegGrad},
    {"", "Abs", AbsGrad},
    {"", "Relu", ReluGrad},
    {"", "LeakyRelu", LeakyReluGrad},
    {"", "Sigmoid", SigmoidGrad},
    {"", "Tanh", TanhGrad},
    {"", "Exp", ExpGrad},
    {"", "Log", LogGrad},
    {"", "Sqrt", SqrtGrad},
    {"", "Reciprocal", ReciprocalGrad},
    {"", "Erf", ErfGrad},
    {"", "Sin", SinGrad},
    {"", "Gelu", GeluGrad},
    {"", "Clip", ClipGrad},
    {"", "Cast", CastGrad},
    {"", "CastLike", CastGrad},
    {"", "Dropout", DropoutGrad},
    {kMicrosoftDomain, "Scale", ScaleGrad},
    {"", "Add", PassThroughGrad},
    {"", "Sub", SubGrad},
    {"", "Mul", MulGrad},
    {"", "Div", DivGrad},
    {"", "Pow", PowGrad},
    {"", "Sum", PassThroughGrad},
    {"", "Mean", MeanGrad},
    {"", "Max", MaxMinGrad},
    {"", "Min", MaxMinGrad},
    {"", "Where", WhereGrad},
};

}  // namespace

std::span<const GradientRuleEntry> ElementwiseGradientRules() { return kRules; }

}  // namespace zerograph::autodiff
