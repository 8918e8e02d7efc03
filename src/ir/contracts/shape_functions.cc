#include "ir/contracts/shape_functions.h"

namespace zerograph::contracts {
namespace {

StatusOr<TensorSpec> Broadcast(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(1));
  ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes: ", DataTypeName(a->dtype),
                   " and ", DataTypeName(b->dtype));
  ZG_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape, b->shape));
  return TensorSpec{a->dtype, std::move(shape)};
}

}  // namespace

StatusOr<std::vector<TensorSpec>> SameAsFirstInput(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  return std::vector<TensorSpec>{*x};
}

StatusOr<std::vector<TensorSpec>> BroadcastBinary(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(TensorSpec out, Broadcast(ctx));
  return std::vector<TensorSpec>{std::move(out)};
}

StatusOr<std::vector<TensorSpec>> BroadcastComparison(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(TensorSpec out, Broadcast(ctx));
  out.dtype = DataType::kBool;
  return std::vector<TensorSpec>{std::move(out)};
}

StatusOr<std::vector<TensorSpec>> SameShapeBinary(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(1));
  ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes: ", DataTypeName(a->dtype),
                   " and ", DataTypeName(b->dtype));
  ZG_RETURN_IF_NOT(a->shape == b->shape, "inputs of different shapes: ", ShapeToString(a->shape),
                   " and ", ShapeToString(b->shape));
  return std::vector<TensorSpec>{*a};
}

}  // namespace zerograph::contracts
