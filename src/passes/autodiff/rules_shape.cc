// Gradient rules of the shape and data-movement ops. Shapes the backward needs come from the
// forward values' static types as constants, or, for symbolic dims, from Shape nodes (and Concats
// of them), which the executor computes while planning: no backward node keeps a forward
// activation alive just for its shape. Integer inputs (shapes, axes, indices) get no gradient.
//
// Backward nodes use the input forms of opset 13 (Split's split, ReduceSum's axes), Shape-15's
// start/end for a symbolic dim, and ScatterElements-16's reduction (GatherElements).

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "passes/autodiff/gradient_rule.h"
#include "zerograph/ir/data_movement_shapes.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/tensor_spec.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

constexpr int64_t kUnknown = TensorType::kUnknownDim;

std::vector<int64_t> DimsOf(const GradientContext& ctx, const Value& value) {
  return ctx.type(value).dims.value_or(std::vector<int64_t>{});
}

// Builds a 1-D int64 value from static dims and runs of another value's run-time dims.
class DimsBuilder {
 public:
  explicit DimsBuilder(GradientContext& ctx) : ctx_(ctx) {}

  void Static(int64_t dim) { pending_.push_back(dim); }
  // Dims [start, end) of `of`'s shape.
  void RunTime(Value& of, int64_t start, int64_t end) {
    Flush();
    const bool whole = start == 0 && end == ctx_.rank(of);
    pieces_.push_back(whole ? ctx_.Op("Shape", {&of})
                            : ctx_.Op("Shape", {&of}, {Attr("start", start), Attr("end", end)}));
  }
  Value* Build() {
    Flush();
    if (pieces_.size() == 1) return pieces_[0];
    return ctx_.AddNode("Concat", pieces_, 1, {Attr("axis", 0)})->output(0);
  }

 private:
  void Flush() {
    if (!pending_.empty()) pieces_.push_back(ctx_.Int64s(pending_));
    pending_.clear();
  }

  GradientContext& ctx_;
  std::vector<int64_t> pending_;
  std::vector<Value*> pieces_;
};

// `dims` as a value: its static entries as constants, its unknown ones read from `of`, whose
// shape has them at the same positions.
Value* ShapeValue(GradientContext& ctx, std::span<const int64_t> dims, Value& of) {
  DimsBuilder builder(ctx);
  const auto rank = static_cast<int64_t>(dims.size());
  for (int64_t d = 0; d < rank;) {
    if (dims[d] != kUnknown) {
      builder.Static(dims[d++]);
      continue;
    }
    const int64_t start = d;
    while (d < rank && dims[d] == kUnknown) ++d;
    builder.RunTime(of, start, d);
  }
  return builder.Build();
}

Value* ShapeValue(GradientContext& ctx, Value& of) { return ShapeValue(ctx, DimsOf(ctx, of), of); }

// Zeros of `dims` (unknown entries as in `of`'s shape), in `like`'s dtype.
Value* Zeros(GradientContext& ctx, std::span<const int64_t> dims, Value& of, const Value& like) {
  return ctx.Op("Expand", {ctx.Scalar(0.0f, ctx.type(like).dtype), ShapeValue(ctx, dims, of)});
}

// The integers of a host-read input, which must be an initializer.
StatusOr<std::vector<int64_t>> ConstantInts(const Value& value, std::string_view what) {
  const Tensor* tensor = value.initializer();
  ZG_RETURN_IF_NOT(tensor != nullptr, what, " '", value.name(),
                   "' must be an initializer to differentiate through it");
  ZG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, tensor->Bytes());
  return ReadInts(HostValue{tensor->dtype(), tensor->dims(), bytes}, what);
}

// --- Rules.

// Reshape, Flatten, Squeeze, Unsqueeze: dX = dY reshaped to X's shape (any opset's axes form).
Status ReshapeGrad(GradientContext& ctx) {
  Value& x = *ctx.input(0);
  return ctx.SetInputGrad(0, ctx.Op("Reshape", {ctx.output_grad(0), ShapeValue(ctx, x)}));
}

// dX = dY transposed by the inverse permutation; the default (reversed) is its own inverse.
Status TransposeGrad(GradientContext& ctx) {
  const std::optional<std::span<const int64_t>> perm = ctx.node().GetInts("perm");
  if (!perm) return ctx.SetInputGrad(0, ctx.Op("Transpose", {ctx.output_grad(0)}));
  std::vector<int64_t> inverse(perm->size());
  for (size_t i = 0; i < perm->size(); ++i) {
    const int64_t p = (*perm)[i];
    ZG_RETURN_IF_NOT(p >= 0 && p < static_cast<int64_t>(perm->size()), "perm has ", p);
    inverse[static_cast<size_t>(p)] = static_cast<int64_t>(i);
  }
  return ctx.SetInputGrad(
      0, ctx.Op("Transpose", {ctx.output_grad(0)}, {Attr("perm", std::move(inverse))}));
}

// dX = dY summed over the broadcast axes.
Status ExpandGrad(GradientContext& ctx) {
  return ctx.SetInputGrad(0, ctx.ReduceToShapeOf(ctx.output_grad(0), *ctx.input(0)));
}

// dY split back into the inputs' sizes along the axis.
Status ConcatGrad(GradientContext& ctx) {
  const Node& node = ctx.node();
  ZG_ASSIGN_OR_RETURN(const int64_t attr, ContractInt(node, "axis"));
  ZG_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(attr, ctx.rank(*ctx.output(0))));
  DimsBuilder sizes(ctx);
  for (Value* input : node.inputs()) {
    const int64_t dim = DimsOf(ctx, *input)[static_cast<size_t>(axis)];
    if (dim == kUnknown) {
      sizes.RunTime(*input, axis, axis + 1);
    } else {
      sizes.Static(dim);
    }
  }
  Value* inputs[] = {ctx.output_grad(0), sizes.Build()};
  Node* split = ctx.AddNode("Split", inputs, node.num_inputs(), {Attr("axis", axis)});
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    if (ctx.needs_grad(i)) ZG_RETURN_IF_ERROR(ctx.SetInputGrad(i, split->output(i)));
  }
  return Status::Ok();
}

// dX = the outputs' gradients concatenated; an output no gradient reaches contributes zeros.
Status SplitGrad(GradientContext& ctx) {
  const Node& node = ctx.node();
  ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(node, "axis"));
  std::vector<Value*> parts(node.num_outputs());
  for (size_t i = 0; i < parts.size(); ++i) {
    Value& output = *node.output(i);
    parts[i] = ctx.output_grad(i);
    if (parts[i] == nullptr) parts[i] = Zeros(ctx, DimsOf(ctx, output), output, output);
  }
  if (parts.size() == 1) return ctx.SetInputGrad(0, parts[0]);
  return ctx.SetInputGrad(0, ctx.AddNode("Concat", parts, 1, {Attr("axis", axis)})->output(0));
}

// Slice's ranges: from attributes before opset 10, from constant inputs since.
StatusOr<SliceRanges> SliceRangesOf(const GradientContext& ctx, std::span<const int64_t> dims) {
  const Node& node = ctx.node();
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  if (node.num_inputs() == 1) {
    ZG_ASSIGN_OR_RETURN(starts, ContractInts(node, "starts"));
    ZG_ASSIGN_OR_RETURN(ends, ContractInts(node, "ends"));
    if (node.HasAttribute("axes")) {
      ZG_ASSIGN_OR_RETURN(axes, ContractInts(node, "axes"));
    }
  } else {
    ZG_ASSIGN_OR_RETURN(starts, ConstantInts(*node.input(1), "starts"));
    ZG_ASSIGN_OR_RETURN(ends, ConstantInts(*node.input(2), "ends"));
    if (node.num_inputs() > 3 && node.input(3) != nullptr) {
      ZG_ASSIGN_OR_RETURN(axes, ConstantInts(*node.input(3), "axes"));
    }
    if (node.num_inputs() > 4 && node.input(4) != nullptr) {
      ZG_ASSIGN_OR_RETURN(steps, ConstantInts(*node.input(4), "steps"));
    }
  }
  // A symbolic dim matters only where the slice cuts it.
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> probe(dims.begin(), dims.end());
  for (int64_t& d : probe) d = d == kUnknown ? 1 : d;
  const std::vector<int64_t> listed = axes.value_or(std::vector<int64_t>{});
  for (size_t i = 0; i < starts.size(); ++i) {
    ZG_ASSIGN_OR_RETURN(const int64_t axis,
                        NormalizeAxis(axes ? listed[i] : static_cast<int64_t>(i), rank));
    ZG_RETURN_IF_NOT(dims[static_cast<size_t>(axis)] != kUnknown, "Slice along symbolic dim ", axis,
                     " has no gradient rule yet");
  }
  auto span = [](const std::optional<std::vector<int64_t>>& v) {
    return v ? std::optional<std::span<const int64_t>>(*v) : std::nullopt;
  };
  return ResolveSlice(probe, starts, ends, span(axes), span(steps));
}

// dX = dY put back where Slice read it, zeros elsewhere, one axis at a time. Along a step-1 axis,
// a Concat of zeros before, dY, zeros after; along a strided one, a Gather from dY with one
// slab of zeros appended, which each position Slice skipped reads.
Status SliceGrad(GradientContext& ctx) {
  Value& x = *ctx.input(0);
  const std::vector<int64_t> x_dims = DimsOf(ctx, x);
  ZG_ASSIGN_OR_RETURN(SliceRanges ranges, SliceRangesOf(ctx, x_dims));
  Value* grad = ctx.output_grad(0);
  // grad's dims: the output's, each axis put back turned into X's.
  std::vector<int64_t> dims = x_dims;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (x_dims[a] != kUnknown) dims[a] = ranges.out[a];
  }
  for (size_t a = 0; a < dims.size(); ++a) {
    const int64_t full = x_dims[a];
    const int64_t start = ranges.start[a];
    const int64_t step = ranges.step[a];
    const int64_t taken = ranges.out[a];
    if (full == kUnknown || (start == 0 && step == 1 && taken == full)) continue;
    const auto axis = static_cast<int64_t>(a);
    auto zeros = [&](int64_t n) {
      std::vector<int64_t> block = dims;
      block[a] = n;
      return Zeros(ctx, block, *grad, x);
    };
    if (step == 1) {
      std::vector<Value*> parts;
      if (start > 0) parts.push_back(zeros(start));
      parts.push_back(grad);
      if (full - start - taken > 0) parts.push_back(zeros(full - start - taken));
      grad = ctx.AddNode("Concat", parts, 1, {Attr("axis", axis)})->output(0);
    } else {
      // Position p of X reads grad's element j where p = start + j·step, else the zeros at `taken`.
      std::vector<int64_t> source(static_cast<size_t>(full), taken);
      for (int64_t j = 0; j < taken; ++j) source[static_cast<size_t>(start + j * step)] = j;
      Value* padded = ctx.Op("Concat", {grad, zeros(1)}, {Attr("axis", axis)});
      grad = ctx.Op("Gather", {padded, ctx.Int64s(source)}, {Attr("axis", axis)});
    }
    dims[a] = full;
  }
  return ctx.SetInputGrad(0, grad);
}

// Y = Tile(X, r): dX = Σ over the copies, dY viewed as [r0, d0, r1, d1, ...] and summed over the
// repeat axes (only those with r > 1 are split out).
Status TileGrad(GradientContext& ctx) {
  Value& x = *ctx.input(0);
  ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats, ConstantInts(*ctx.input(1), "repeats"));
  const std::vector<int64_t> dims = DimsOf(ctx, x);
  DimsBuilder split(ctx);
  std::vector<int64_t> sum_axes;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (repeats[d] != 1) {
      sum_axes.push_back(static_cast<int64_t>(d + sum_axes.size()));
      split.Static(repeats[d]);
    }
    if (dims[d] == kUnknown) {
      split.RunTime(x, static_cast<int64_t>(d), static_cast<int64_t>(d) + 1);
    } else {
      split.Static(dims[d]);
    }
  }
  if (sum_axes.empty()) return ctx.SetInputGrad(0, ctx.output_grad(0));
  Value* copies = ctx.Op("Reshape", {ctx.output_grad(0), split.Build()});
  return ctx.SetInputGrad(
      0, ctx.Op("ReduceSum", {copies, ctx.Int64s(sum_axes)}, {Attr("keepdims", 0)}));
}

// dX = GatherGrad(shape of X, indices, dY): dY's rows summed into the rows they came from.
Status GatherGrad(GradientContext& ctx) {
  Value& x = *ctx.input(0);
  ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(ctx.node(), "axis"));
  return ctx.SetInputGrad(
      0, ctx.Op({kMicrosoftDomain, "GatherGrad"},
                {ShapeValue(ctx, x), ctx.input(1), ctx.output_grad(0)}, {Attr("axis", axis)}));
}

// dX = zeros with dY added at the indices (ScatterElements, reduction add: repeats sum).
Status GatherElementsGrad(GradientContext& ctx) {
  Value& x = *ctx.input(0);
  ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(ctx.node(), "axis"));
  Value* zeros = Zeros(ctx, DimsOf(ctx, x), x, x);
  return ctx.SetInputGrad(0, ctx.Op("ScatterElements", {zeros, ctx.input(1), ctx.output_grad(0)},
                                    {Attr("axis", axis), Attr("reduction", "add")}));
}

constexpr GradientRuleEntry kRules[] = {
    {"", "Reshape", ReshapeGrad},     {"", "Flatten", ReshapeGrad},
    {"", "Squeeze", ReshapeGrad},     {"", "Unsqueeze", ReshapeGrad},
    {"", "Transpose", TransposeGrad}, {"", "Expand", ExpandGrad},
    {"", "Concat", ConcatGrad},       {"", "Split", SplitGrad},
    {"", "Slice", SliceGrad},         {"", "Tile", TileGrad},
    {"", "Gather", GatherGrad},       {"", "GatherElements", GatherElementsGrad},
};

}  // namespace

std::span<const GradientRuleEntry> ShapeGradientRules() { return kRules; }

}  // namespace zerograph::autodiff
