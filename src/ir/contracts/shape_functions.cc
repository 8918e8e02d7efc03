#include "ir/contracts/shape_functions.h"

#include "ir/contracts/broadcast_shape_functions.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

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

// Whether `value` is known, before anything runs, to have rank 0: an initializer or a recorded
// type without dimensions, or the output of an input-less op (Constant) whose contract says so.
bool IsKnownScalar(const Value& value) {
  if (const Tensor* tensor = value.initializer()) return tensor->dims().empty();
  if (std::optional<TensorType> type = value.type(); type && type->dims) return type->dims->empty();
  const Node* producer = value.producer();
  if (producer == nullptr || producer->num_inputs() != 0) return false;
  const OpContract* contract = FindContract(*producer, std::nullopt);
  if (contract == nullptr) return false;
  StatusOr<std::vector<TensorSpec>> specs = contract->infer(ShapeContext{producer, {}, {}, 1});
  const auto index = static_cast<size_t>(value.producer_output_index());
  return specs.ok() && index < specs->size() && (*specs)[index].shape.empty();
}

}  // namespace

std::optional<bool> FirstInputKeepsShape(const Node& /*node*/, size_t input) {
  if (input == 0) return true;
  return std::nullopt;
}

std::optional<bool> KeepsShapeAgainstScalars(const Node& node, size_t input) {
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const Value* other = node.input(i);
    if (i == input || other == nullptr) continue;
    if (!IsKnownScalar(*other)) return std::nullopt;
  }
  return true;
}

KeepsInputShape KeepsInputShapeRuleOf(ShapeFunction infer) {
  if (infer == SameAsFirstInput) return FirstInputKeepsShape;
  if (infer == BroadcastBinary || infer == BroadcastVariadic || infer == BroadcastLikeFirst) {
    return KeepsShapeAgainstScalars;
  }
  return nullptr;
}

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
