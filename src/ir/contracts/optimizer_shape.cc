#include "ir/contracts/optimizer_shape.h"

#include <algorithm>

#include "ir/contracts/shape_functions.h"

namespace zerograph::contracts {

Status CheckScalarInput(const ShapeContext& ctx, size_t index, std::span<const DataType> dtypes,
                        std::string_view what) {
  const TensorSpec* spec = ctx.input(index);
  ZG_RETURN_IF_NOT(spec != nullptr, what, " is missing");
  const bool allowed = std::find(dtypes.begin(), dtypes.end(), spec->dtype) != dtypes.end();
  ZG_RETURN_IF_NOT(allowed && NumElements(spec->shape) == 1, what, " must be a ",
                   DataTypeName(dtypes.front()), " scalar, got ", DataTypeName(spec->dtype),
                   ShapeToString(spec->shape));
  return Status::Ok();
}

StatusOr<std::vector<TensorSpec>> OptimizerOutputs(const ShapeContext& ctx,
                                                   const OptimizerLayout& layout) {
  const size_t scalars = static_cast<size_t>(layout.num_scalars);
  const size_t groups = 2 + static_cast<size_t>(layout.num_states);  // X, G, states
  const std::optional<size_t> params = layout.NumParams(ctx.num_inputs(), ctx.node->num_outputs());
  ZG_RETURN_IF_NOT(params.has_value(), "expects ", scalars, " scalars and ", groups,
                   " groups of n tensors",
                   layout.optional_control ? " (then an optional control)" : "", ", got ",
                   ctx.num_inputs(), " inputs and ", ctx.node->num_outputs(), " outputs");
  const size_t n = *params;
  std::vector<TensorSpec> outputs;
  outputs.reserve(n * (groups - 1));
  for (size_t group = 0; group < groups; ++group) {
    for (size_t i = 0; i < n; ++i) {
      const size_t index = scalars + group * n + i;
      ZG_ASSIGN_OR_RETURN(const TensorSpec* spec, ctx.Required(index));
      const TensorSpec& x = *ctx.input(scalars + i);
      ZG_RETURN_IF_NOT(*spec == x, "input ", index, " is ", DataTypeName(spec->dtype),
                       ShapeToString(spec->shape), " but X", i + 1, " is ", DataTypeName(x.dtype),
                       ShapeToString(x.shape));
      if (group != 1) outputs.push_back(*spec);  // no output for the gradients
    }
  }
  if (layout.HasControl(ctx.num_inputs(), ctx.node->num_outputs())) {
    const size_t index = ctx.num_inputs() - 1;
    ZG_ASSIGN_OR_RETURN(const TensorSpec* control, ctx.Required(index));
    ZG_RETURN_IF_NOT(control->dtype == DataType::kFloat32 && control->shape == Shape{3},
                     "control (input ", index, ") must be float[3], got ",
                     DataTypeName(control->dtype), ShapeToString(control->shape));
  }
  return outputs;
}

}  // namespace zerograph::contracts
