// Gradient rules of the shape and data-movement ops. Shapes the backward needs come from the
// forward values' static types as constants, or, for symbolic dims, from Shape nodes (and Concats
// of them), which the executor computes while planning: no backward node keeps a forward
// activation alive just for its shape. Integer inputs (shapes, axes, indices) get no gradient.
//
// Backward nodes take the form of the graph's opset (Split's sizes and ReduceSum's axes are inputs
// from 13 on, attributes before); GatherElements' gradient needs ScatterElements-16's reduction.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <variant>
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

// Builds a 1-D int64 value from static dims, dims of values' shapes read when the graph runs,
// and dims computed from those.
class DimsBuilder {
 public:
  explicit DimsBuilder(GradientContext& ctx) : ctx_(ctx) {}

  void Static(int64_t dim) {
    StartRun(nullptr);
    statics_.push_back(dim);
  }
  // Dim `d` of `of`'s shape.
  void RunTime(Value& of, int64_t d) {
    StartRun(&of);
    indices_.push_back(d);
  }
  // A 1-D int64 value of dims.
  void Computed(Value* dims) {
    Flush();
    pieces_.push_back(dims);
  }
  Value* Build() {
    Flush();
    if (pieces_.size() == 1) return pieces_[0];
    return ctx_.AddNode("Concat", pieces_, 1, {Attr("axis", 0)})->output(0);
  }

 private:
  // Runs of static dims (of null) and of one value's dims each become one piece.
  void StartRun(Value* of) {
    if (of != of_) Flush();
    of_ = of;
  }
  void Flush() {
    if (!statics_.empty()) pieces_.push_back(ctx_.Int64s(statics_));
    if (!indices_.empty()) {
      Value* shape = ctx_.Op("Shape", {of_});
      bool whole = static_cast<int64_t>(indices_.size()) == ctx_.rank(*of_);
      for (size_t i = 0; whole && i < indices_.size(); ++i) {
        whole = indices_[i] == static_cast<int64_t>(i);
      }
      pieces_.push_back(whole ? shape : ctx_.Op("Gather", {shape, ctx_.Int64s(indices_)}));
    }
    statics_.clear();
    indices_.clear();
  }

  GradientContext& ctx_;
  Value* of_ = nullptr;
  std::vector<int64_t> statics_;
  std::vector<int64_t> indices_;
  std::vector<Value*> pieces_;
};

// `dims` as a value: its static entries as constants, its unknown ones read from `of`, whose
// shape has them at the same positions.
Value* ShapeValue(GradientContext& ctx, std::span<const int64_t> dims, Value& of) {
  DimsBuilder builder(ctx);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == kUnknown) {
      builder.RunTime(of, static_cast<int64_t>(d));
    } else {
      builder.Static(dims[d]);
    }
  }
  return builder.Build();
}

Value* ShapeValue(GradientContext& ctx, Value& of) { return ShapeValue(ctx, DimsOf(ctx, of), of); }

Value* Zeros(GradientContext& ctx, Value* shape, const Value& like) {
  return ctx.Op("Expand", {ctx.Scalar(0.0f, ctx.type(like).dtype), shape});
}

// Zeros of `dims` (unknown entries as in `of`'s shape), in `like`'s dtype.
Value* Zeros(GradientContext& ctx, std::span<const int64_t> dims, Value& of, const Value& like) {
  return Zeros(ctx, ShapeValue(ctx, dims, of), like);
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

// dY split back into the inputs' sizes along the axis (sizes known only when the graph runs need
// Split-13's sizes input).
Status ConcatGrad(GradientContext& ctx) {
  const Node& node = ctx.node();
  ZG_ASSIGN_OR_RETURN(const int64_t attr, ContractInt(node, "axis"));
  ZG_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(attr, ctx.rank(*ctx.output(0))));
  std::vector<int64_t> sizes;
  for (Value* input : node.inputs())
    sizes.push_back(DimsOf(ctx, *input)[static_cast<size_t>(axis)]);
  const bool symbolic = std::find(sizes.begin(), sizes.end(), kUnknown) != sizes.end();
  Node* split;
  if (ctx.opset() >= 13) {
    DimsBuilder split_sizes(ctx);
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == kUnknown) {
        split_sizes.RunTime(*node.input(i), axis);
      } else {
        split_sizes.Static(sizes[i]);
      }
    }
    Value* inputs[] = {ctx.output_grad(0), split_sizes.Build()};
    split = ctx.AddNode("Split", inputs, node.num_inputs(), {Attr("axis", axis)});
  } else {
    ZG_RETURN_IF_NOT(!symbolic, "Concat along a symbolic dim needs opset 13 for its gradient ",
                     "(Split's sizes as an input); the graph's opset is ", ctx.opset());
    Value* inputs[] = {ctx.output_grad(0)};
    split = ctx.AddNode("Split", inputs, node.num_inputs(),
                        {Attr("axis", axis), Attr("split", std::move(sizes))});
  }
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

// One axis of a Slice as its inputs give it (indices from the back negative).
struct AxisSlice {
  int64_t axis = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 1;
};

// Slice's axes: from attributes before opset 10, from constant inputs since.
StatusOr<std::vector<AxisSlice>> AxisSlicesOf(const Node& node, int64_t rank) {
  std::vector<int64_t> starts, ends, axes, steps;
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
  ZG_RETURN_IF_NOT(ends.size() == starts.size() && (axes.empty() || axes.size() == starts.size()) &&
                       (steps.empty() || steps.size() == starts.size()),
                   "starts, ends, axes and steps differ in length");
  std::vector<AxisSlice> slices(starts.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    ZG_ASSIGN_OR_RETURN(slices[i].axis,
                        NormalizeAxis(axes.empty() ? static_cast<int64_t>(i) : axes[i], rank));
    slices[i].start = starts[i];
    slices[i].end = ends[i];
    slices[i].step = steps.empty() ? 1 : steps[i];
  }
  return slices;
}

// A bound past any dim a graph runs with: "to the end" (exporters write INT64_MAX or INT32_MAX)
// or, negated, "from the start".
constexpr int64_t kPastAnyDim = int64_t{1} << 30;

// dX = dY put back where Slice read it, zeros elsewhere, one axis at a time. Along a step-1 axis,
// a Concat of zeros before, dY, zeros after; along a strided one, a Gather from dY with one
// slab of zeros appended, which each position Slice skipped reads. Along a symbolic dim (step 1
// only), a zero block's length that depends on the dim is computed from X's shape when the graph
// runs, assuming the bounds fall inside the dim.
Status SliceGrad(GradientContext& ctx) {
  Value& x = *ctx.input(0);
  const std::vector<int64_t> x_dims = DimsOf(ctx, x);
  ZG_ASSIGN_OR_RETURN(std::vector<AxisSlice> slices,
                      AxisSlicesOf(ctx.node(), static_cast<int64_t>(x_dims.size())));
  Value* grad = ctx.output_grad(0);
  // grad's dims: the output's (unknown along a symbolic dim), each axis put back turned into X's.
  std::vector<int64_t> dims = DimsOf(ctx, *ctx.output(0));
  for (const AxisSlice& slice : slices) {
    const auto a = static_cast<size_t>(slice.axis);
    const int64_t full = x_dims[a];
    // Zeros of grad's shape but `count` long along the axis: a number, or a value computed when
    // the graph runs.
    auto zeros = [&](std::variant<int64_t, Value*> count) {
      DimsBuilder shape(ctx);
      for (size_t d = 0; d < dims.size(); ++d) {
        if (d == a && std::holds_alternative<Value*>(count)) {
          shape.Computed(std::get<Value*>(count));
        } else if (d == a) {
          shape.Static(std::get<int64_t>(count));
        } else if (dims[d] == kUnknown) {
          shape.RunTime(*grad, static_cast<int64_t>(d));
        } else {
          shape.Static(dims[d]);
        }
      }
      return Zeros(ctx, shape.Build(), x);
    };
    auto pad = [&](Value* before, Value* after) {
      std::vector<Value*> parts;
      if (before != nullptr) parts.push_back(before);
      parts.push_back(grad);
      if (after != nullptr) parts.push_back(after);
      grad = ctx.AddNode("Concat", parts, 1, {Attr("axis", slice.axis)})->output(0);
      dims[a] = full;
    };
    if (full == kUnknown) {
      ZG_RETURN_IF_NOT(slice.step == 1, "Slice with step ", slice.step, " along symbolic dim ",
                       slice.axis, " has no gradient rule");
      // X's dim plus `offset`, when the graph runs.
      auto dim_plus = [&](int64_t offset) -> Value* {
        DimsBuilder dim(ctx);
        dim.RunTime(x, slice.axis);
        return ctx.Op("Add", {dim.Build(), ctx.Int64s({offset})});
      };
      const int64_t start = slice.start;
      const int64_t end = slice.end;
      ZG_RETURN_IF_NOT(end > -kPastAnyDim, "Slice ending at ", end, " is empty");
      Value* before = start > 0                           ? zeros(start)
                      : start > -kPastAnyDim && start < 0 ? zeros(dim_plus(start))
                                                          : nullptr;
      Value* after = end >= kPastAnyDim ? nullptr : end < 0 ? zeros(-end) : zeros(dim_plus(-end));
      pad(before, after);
      continue;
    }
    const int64_t one[] = {slice.axis};
    const int64_t bounds[] = {slice.start, slice.end, slice.step};
    ZG_ASSIGN_OR_RETURN(const SliceRanges ranges,
                        ResolveSlice(x_dims, std::span(bounds, 1), std::span(bounds + 1, 1),
                                     std::span<const int64_t>(one), std::span(bounds + 2, 1)));
    const int64_t start = ranges.start[a];
    const int64_t step = ranges.step[a];
    const int64_t taken = ranges.out[a];
    if (start == 0 && step == 1 && taken == full) continue;
    if (step == 1) {
      const int64_t after = full - start - taken;
      pad(start > 0 ? zeros(start) : nullptr, after > 0 ? zeros(after) : nullptr);
      continue;
    }
    // Position p of X reads grad's element j where p = start + j·step, else the zeros at `taken`.
    std::vector<int64_t> source(static_cast<size_t>(full), taken);
    for (int64_t j = 0; j < taken; ++j) source[static_cast<size_t>(start + j * step)] = j;
    Value* padded = ctx.Op("Concat", {grad, zeros(int64_t{1})}, {Attr("axis", slice.axis)});
    grad = ctx.Op("Gather", {padded, ctx.Int64s(source)}, {Attr("axis", slice.axis)});
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
  ZG_RETURN_IF_NOT(repeats.size() == dims.size(), "repeats has ", repeats.size(),
                   " values for a rank-", dims.size(), " input");
  if (std::all_of(repeats.begin(), repeats.end(), [](int64_t r) { return r == 1; })) {
    return ctx.SetInputGrad(0, ctx.output_grad(0));
  }
  DimsBuilder split(ctx);
  std::vector<int64_t> sum_axes;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (repeats[d] != 1) {
      sum_axes.push_back(static_cast<int64_t>(d + sum_axes.size()));
      split.Static(repeats[d]);
    }
    if (dims[d] == kUnknown) {
      split.RunTime(x, static_cast<int64_t>(d));
    } else {
      split.Static(dims[d]);
    }
  }
  Value* copies = ctx.Op("Reshape", {ctx.output_grad(0), split.Build()});
  if (ctx.opset() >= 13) {
    return ctx.SetInputGrad(
        0, ctx.Op("ReduceSum", {copies, ctx.Int64s(sum_axes)}, {Attr("keepdims", 0)}));
  }
  return ctx.SetInputGrad(
      0, ctx.Op("ReduceSum", {copies}, {Attr("axes", std::move(sum_axes)), Attr("keepdims", 0)}));
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
  ZG_RETURN_IF_NOT(ctx.opset() >= 16, "GatherElements' gradient adds with ScatterElements-16's ",
                   "reduction; the graph's opset is ", ctx.opset());
  Value& x = *ctx.input(0);
  ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(ctx.node(), "axis"));
  return ctx.SetInputGrad(
      0, ctx.Op("ScatterElements",
                {Zeros(ctx, DimsOf(ctx, x), x, x), ctx.input(1), ctx.output_grad(0)},
                {Attr("axis", axis), Attr("reduction", "add")}));
}

// Trilu keeps a triangle and zeros the rest, linear in X: dX = the same triangle of dY.
Status TriluGrad(GradientContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const int64_t upper, ContractInt(ctx.node(), "upper"));
  Value* inputs[] = {ctx.output_grad(0), ctx.input(1)};
  const size_t num_inputs = ctx.input(1) != nullptr ? 2 : 1;
  Node* grad = ctx.AddNode("Trilu", std::span(inputs, num_inputs), 1, {Attr("upper", upper)});
  return ctx.SetInputGrad(0, grad->output(0));
}

constexpr GradientRuleEntry kRules[] = {
    {"", "Reshape", ReshapeGrad},     {"", "Flatten", ReshapeGrad},
    {"", "Squeeze", ReshapeGrad},     {"", "Unsqueeze", ReshapeGrad},
    {"", "Transpose", TransposeGrad}, {"", "Expand", ExpandGrad},
    {"", "Concat", ConcatGrad},       {"", "Split", SplitGrad},
    {"", "Slice", SliceGrad},         {"", "Tile", TileGrad},
    {"", "Gather", GatherGrad},       {"", "GatherElements", GatherElementsGrad},
    {"", "Trilu", TriluGrad},
};

}  // namespace

std::span<const GradientRuleEntry> ShapeGradientRules() { return kRules; }

}  // namespace zerograph::autodiff
