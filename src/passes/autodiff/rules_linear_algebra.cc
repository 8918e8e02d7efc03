// Gradients of MatMul and Gemm. The products with a transposed operand are ONNX Runtime's
// FusedMatMul (transA/transB) and Gemm itself, so no Transpose node is materialised.

#include <cstdint>
#include <span>
#include <vector>

#include "passes/autodiff/gradient_rule.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

// Unsqueeze or Squeeze of one axis in the form of the graph's opset: the axes are an input from
// opset 13 on, an attribute before.
Value* OneAxisOp(GradientContext& ctx, OpName op, Value* v, int64_t axis) {
  if (ctx.opset() >= 13) return ctx.Op(op, {v, ctx.Int64s({axis})});
  return ctx.Op(op, {v}, {Attr("axes", std::vector<int64_t>{axis})});
}

// Whether B is a matrix and A has batch dims, with K and N static: then dB = Σ_batch Aᵀ·dY is
// one product of A and dY flattened to rows.
bool FoldsBatchIntoRows(GradientContext& ctx) {
  const TensorType& a = ctx.type(*ctx.input(0));
  const TensorType& b = ctx.type(*ctx.input(1));
  return a.dims && b.dims && a.dims->size() >= 3 && b.dims->size() == 2 &&
         a.dims->back() != TensorType::kUnknownDim && b.dims->back() != TensorType::kUnknownDim;
}

// Y = A·B (numpy matmul): dA = dY·Bᵀ, dB = Aᵀ·dY, each summed over the batch dims its operand
// was broadcast along. A 1-D A is a row [1, K] whose M axis Y lacks; a 1-D B a column [K, 1]
// whose N axis Y lacks: the vectors are promoted, dY gets the missing axes back, and each
// gradient is squeezed back to the vector.
Status MatMulGradient(GradientContext& ctx) {
  Value* a = ctx.input(0);
  Value* b = ctx.input(1);
  Value* dy = ctx.output_grad(0);
  const bool a_vector = ctx.rank(*a) == 1;
  const bool b_vector = ctx.rank(*b) == 1;
  if (a_vector && b_vector) {  // a dot product: Y is a scalar
    if (ctx.needs_grad(0)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(0, ctx.Op("Mul", {dy, b})));
    if (ctx.needs_grad(1)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(1, ctx.Op("Mul", {dy, a})));
    return Status::Ok();
  }
  // Y lacks A's M axis (second to last) or B's N axis (last).
  Value* a2 = a_vector ? OneAxisOp(ctx, "Unsqueeze", a, 0) : a;
  Value* b2 = b_vector ? OneAxisOp(ctx, "Unsqueeze", b, 1) : b;
  Value* dy2 = a_vector   ? OneAxisOp(ctx, "Unsqueeze", dy, -2)
               : b_vector ? OneAxisOp(ctx, "Unsqueeze", dy, -1)
                          : dy;
  if (ctx.needs_grad(0)) {
    Value* da = ctx.ReduceToShapeOf(
        ctx.Op({kMicrosoftDomain, "FusedMatMul"}, {dy2, b2}, {Attr("transB", 1)}), *a2);
    if (a_vector) da = OneAxisOp(ctx, "Squeeze", da, 0);
    ZG_RETURN_IF_ERROR(ctx.SetInputGrad(0, da));
  }
  if (ctx.needs_grad(1) && FoldsBatchIntoRows(ctx)) {
    // A batch of rows against a matrix (a linear layer over [batch, seq, K]): the batch folds
    // into the rows, one [K, N] product instead of [batch..., K, N] ones summed afterwards.
    const int64_t k = ctx.type(*a).dims->back(), n = ctx.type(*b).dims->back();
    Value* rows = ctx.Op("Reshape", {a, ctx.Int64s({-1, k})});
    Value* row_grads = ctx.Op("Reshape", {dy, ctx.Int64s({-1, n})});
    ZG_RETURN_IF_ERROR(ctx.SetInputGrad(1, ctx.Op("Gemm", {rows, row_grads}, {Attr("transA", 1)})));
  } else if (ctx.needs_grad(1)) {
    Value* db = ctx.ReduceToShapeOf(
        ctx.Op({kMicrosoftDomain, "FusedMatMul"}, {a2, dy2}, {Attr("transA", 1)}), *b2);
    if (b_vector) db = OneAxisOp(ctx, "Squeeze", db, 1);
    ZG_RETURN_IF_ERROR(ctx.SetInputGrad(1, db));
  }
  return Status::Ok();
}

// Y = α·A'·B' + β·C with A' = transA ? Aᵀ : A, B' likewise (2-D):
//   dA' = α·dY·B'ᵀ, so dA = transA ? α·B'·dYᵀ : α·dY·B'ᵀ;
//   dB' = α·A'ᵀ·dY, so dB = transB ? α·dYᵀ·A' : α·A'ᵀ·dY;
//   dC = β·dY summed over the axes C was broadcast along.
// Each product is a Gemm whose trans flags absorb the transposes.
Status GemmGradient(GradientContext& ctx) {
  const Node& node = ctx.node();
  const float alpha = node.GetFloat("alpha").value_or(1.0f);
  const float beta = node.GetFloat("beta").value_or(1.0f);
  const int64_t trans_a = node.GetInt("transA").value_or(0);
  const int64_t trans_b = node.GetInt("transB").value_or(0);
  Value* a = ctx.input(0);
  Value* b = ctx.input(1);
  Value* dy = ctx.output_grad(0);
  if (ctx.needs_grad(0)) {
    Value* da = trans_a
                    ? ctx.Op("Gemm", {b, dy},
                             {Attr("alpha", alpha), Attr("transA", trans_b), Attr("transB", 1)})
                    : ctx.Op("Gemm", {dy, b}, {Attr("alpha", alpha), Attr("transB", 1 - trans_b)});
    ZG_RETURN_IF_ERROR(ctx.SetInputGrad(0, da));
  }
  if (ctx.needs_grad(1)) {
    Value* db = trans_b
                    ? ctx.Op("Gemm", {dy, a},
                             {Attr("alpha", alpha), Attr("transA", 1), Attr("transB", trans_a)})
                    : ctx.Op("Gemm", {a, dy}, {Attr("alpha", alpha), Attr("transA", 1 - trans_a)});
    ZG_RETURN_IF_ERROR(ctx.SetInputGrad(1, db));
  }
  if (ctx.needs_grad(2)) {
    Value* dc = ctx.ReduceToShapeOf(dy, *ctx.input(2));
    if (beta != 1.0f) dc = ctx.Op("Mul", {dc, ctx.Scalar(beta, ctx.type(*dy).dtype)});
    ZG_RETURN_IF_ERROR(ctx.SetInputGrad(2, dc));
  }
  return Status::Ok();
}

constexpr GradientRuleEntry kRules[] = {
    {"", "MatMul", &MatMulGradient},
    {"", "Gemm", &GemmGradient},
};

}  // namespace

std::span<const GradientRuleEntry> LinearAlgebraGradientRules() { return kRules; }

}  // namespace zerograph::autodiff
