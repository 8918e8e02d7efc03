#include "ir/contracts/broadcast_shape_functions.h"

namespace zerograph::contracts {

StatusOr<std::vector<TensorSpec>> BroadcastVariadic(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* first, ctx.Required(0));
  TensorSpec out = *first;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* in, ctx.Required(i));
    ZG_RETURN_IF_NOT(in->dtype == out.dtype, "input ", i, " is ", DataTypeName(in->dtype),
                     ", input 0 is ", DataTypeName(out.dtype));
    StatusOr<Shape> shape = BroadcastShapes(out.shape, in->shape);
    ZG_RETURN_IF_NOT(shape.ok(), "input ", i, " ", ShapeToString(in->shape),
                     " does not broadcast with ", ShapeToString(out.shape));
    out.shape = *std::move(shape);
  }
  return std::vector<TensorSpec>{std::move(out)};
}

StatusOr<std::vector<TensorSpec>> WhereShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* condition, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* y, ctx.Required(2));
  ZG_RETURN_IF_NOT(x->dtype == y->dtype, "X is ", DataTypeName(x->dtype), ", Y is ",
                   DataTypeName(y->dtype));
  StatusOr<Shape> xy = BroadcastShapes(x->shape, y->shape);
  StatusOr<Shape> all = xy.ok() ? BroadcastShapes(condition->shape, *xy) : xy;
  ZG_RETURN_IF_NOT(all.ok(), "condition ", ShapeToString(condition->shape), ", X ",
                   ShapeToString(x->shape), " and Y ", ShapeToString(y->shape),
                   " do not broadcast");
  return std::vector<TensorSpec>{{x->dtype, *std::move(all)}};
}

StatusOr<std::vector<TensorSpec>> BroadcastLikeFirst(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape, b->shape));
  return std::vector<TensorSpec>{{a->dtype, std::move(shape)}};
}

}  // namespace zerograph::contracts
