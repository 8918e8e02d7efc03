// Contracts of ONNX Runtime's element-wise training ops (domain com.microsoft), as its published
// schemas define them (orttraining/core/graph/training_op_defs.cc): the gradients of the
// activations and of Div, and Scale.

#include <algorithm>
#include <string_view>

#include "ir/contracts/contracts.h"
#include "ir/contracts/shape_functions.h"

namespace zerograph::contracts {
namespace {

// ScaleT: what Scale's scalar may be.
constexpr DataType kScaleTypes[] = {kFloat32, kFloat64, kInt64, kInt32};

// BiasGeluGrad_dX(dY, X, B): dY and X of one shape, B a vector as long as X's last dimension.
StatusOr<std::vector<TensorSpec>> BiasGeluGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* dy, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(2));
  ZG_RETURN_IF_NOT(dy->dtype == x->dtype && b->dtype == x->dtype, "inputs of different dtypes");
  ZG_RETURN_IF_NOT(dy->shape == x->shape, "dY ", ShapeToString(dy->shape), " and X ",
                   ShapeToString(x->shape), " differ");
  ZG_RETURN_IF_NOT(!x->shape.empty() && b->shape.size() == 1 && b->shape[0] == x->shape.back(),
                   "B ", ShapeToString(b->shape), " is not the last dimension of X ",
                   ShapeToString(x->shape));
  return std::vector<TensorSpec>{*x};
}

// DivGrad(dY, A, B) -> dA, dB: dY has the broadcast shape of A and B; each gradient its input's.
StatusOr<std::vector<TensorSpec>> DivGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* dy, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(2));
  ZG_RETURN_IF_NOT(dy->dtype == a->dtype && b->dtype == a->dtype, "inputs of different dtypes");
  StatusOr<Shape> broadcast = BroadcastShapes(a->shape, b->shape);
  ZG_RETURN_IF_NOT(broadcast.ok() && *broadcast == dy->shape, "dY ", ShapeToString(dy->shape),
                   " is not the broadcast of A ", ShapeToString(a->shape), " and B ",
                   ShapeToString(b->shape));
  // dB is optional: a node may list dA alone.
  std::vector<TensorSpec> out = {*a, *b};
  out.resize(std::min(out.size(), ctx.node->num_outputs()));
  return out;
}

StatusOr<std::vector<TensorSpec>> ScaleShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* scale, ctx.Required(1));
  ZG_RETURN_IF_NOT(NumElements(scale->shape) == 1, "scale ", ShapeToString(scale->shape),
                   " is not a single value");
  return std::vector<TensorSpec>{*x};
}

// dX = f(dY, X or Y), all of one shape.
OpContract Gradient(std::string_view name, std::string_view second_input) {
  return {kMicrosoftDomain,
          name,
          1,
          {{"dY", "T"}, {second_input, "T"}},
          {{"dX", "T"}},
          {},
          {{"T", kFloatTypes}},
          SameShapeBinary};
}

}  // namespace

Status AddMicrosoftElementwiseContracts(OpContracts& contracts) {
  ZG_RETURN_IF_ERROR(contracts.Add(Gradient("ReluGrad", "X")));
  ZG_RETURN_IF_ERROR(contracts.Add(Gradient("SigmoidGrad", "Y")));
  ZG_RETURN_IF_ERROR(contracts.Add(Gradient("TanhGrad", "Y")));
  ZG_RETURN_IF_ERROR(contracts.Add(Gradient("GeluGrad", "X")));
  ZG_RETURN_IF_ERROR(contracts.Add(Gradient("FastGeluGrad", "X")));
  ZG_RETURN_IF_ERROR(contracts.Add({kMicrosoftDomain,
                                    "BiasGeluGrad_dX",
                                    1,
                                    {{"dY", "T"}, {"X", "T"}, {"B", "T"}},
                                    {{"dX", "T"}},
                                    {},
                                    {{"T", kFloatTypes}},
                                    BiasGeluGradShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({kMicrosoftDomain,
                                    "DivGrad",
                                    1,
                                    {{"dY", "T"}, {"A", "T"}, {"B", "T"}},
                                    {{"dA", "T", kOptional}, {"dB", "T", kOptional}},
                                    {},
                                    {{"T", kFloatTypes}},
                                    DivGradShape}));
  // output = input · scale, or input / scale with scale_down.
  return contracts.Add({kMicrosoftDomain,
                        "Scale",
                        1,
                        {{"input", "T"}, {"scale", "ScaleT"}},
                        {{"output", "T"}},
                        {{"scale_down", AttributeType::kInt, false, int64_t{0}}},
                        {{"T", kFloatTypes}, {"ScaleT", kScaleTypes}},
                        ScaleShape});
}

}  // namespace zerograph::contracts
