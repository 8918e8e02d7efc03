// Contracts of the losses, dropout, FusedMatMul and the gradient accumulator: ONNX's
// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss and Dropout as ONNX's schemas define them, and
// ONNX Runtime's com.microsoft training ops as its published schemas define them
// (orttraining/core/graph/training_op_defs.cc, core/graph/contrib_ops/contrib_defs.cc).

#include <algorithm>

#include "ir/contracts/contracts.h"
#include "ir/contracts/shape_functions.h"
#include "zerograph/ir/fused_matmul_shapes.h"

namespace zerograph::contracts {
namespace {

constexpr std::string_view kMicrosoft = "com.microsoft";

// The output's dtype: the `output_type` attribute (an ONNX data type) when the node has one,
// else `fallback` (ONNX Runtime's internal loss ops).
StatusOr<DataType> OutputType(const Node& node, DataType fallback) {
  if (!node.HasAttribute("output_type")) return fallback;
  ZG_ASSIGN_OR_RETURN(int64_t onnx_type, ContractInt(node, "output_type"));
  std::optional<DataType> dtype = DataTypeFromOnnx(static_cast<int32_t>(onnx_type));
  ZG_RETURN_IF_NOT(dtype.has_value() && std::ranges::count(kFloatTypes, *dtype) == 1,
                   "output_type ", onnx_type, " is not a floating type");
  return *dtype;
}

// The labels' shape for scores [N, C, d1, ...]: [N, d1, ...].
Shape LabelShapeOf(const Shape& scores) {
  Shape labels = {scores[0]};
  labels.insert(labels.end(), scores.begin() + 2, scores.end());
  return labels;
}

// Scores [N, C, d1, ...] against labels [N, d1, ...] and weights [C]: checks the shapes, and
// returns the loss's shape (labels' for reduction none, else a scalar).
StatusOr<Shape> LossShape(const ShapeContext& ctx, size_t weights_input) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* scores, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* labels, ctx.Required(1));
  const Shape& s = scores->shape;
  ZG_RETURN_IF_NOT(s.size() >= 2, "scores must have rank 2 or more, got ", ShapeToString(s));
  ZG_RETURN_IF_NOT(labels->shape == LabelShapeOf(s), "labels ", ShapeToString(labels->shape),
                   " do not match scores ", ShapeToString(s));
  if (const TensorSpec* weights = ctx.input(weights_input)) {
    ZG_RETURN_IF_NOT(weights->dtype == scores->dtype, "weights have another dtype");
    ZG_RETURN_IF_NOT(weights->shape == Shape{s[1]}, "weights ", ShapeToString(weights->shape),
                     " must be [C] = [", s[1], "]");
  }
  ZG_ASSIGN_OR_RETURN(std::string reduction, ContractString(*ctx.node, "reduction"));
  ZG_RETURN_IF_NOT(reduction == "none" || reduction == "sum" || reduction == "mean", "reduction '",
                   reduction, "' is not none, sum or mean");
  return reduction == "none" ? labels->shape : Shape{};
}

// SoftmaxCrossEntropyLoss (and the Internal op): the loss, then log_prob like the scores.
StatusOr<std::vector<TensorSpec>> SoftmaxLossShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(Shape loss, LossShape(ctx, 2));
  const TensorSpec& scores = *ctx.input(0);
  ZG_ASSIGN_OR_RETURN(DataType out_type, OutputType(*ctx.node, scores.dtype));
  std::vector<TensorSpec> out = {{out_type, std::move(loss)}};
  if (ctx.node->outputs().size() > 1) out.push_back(scores);
  return out;
}

StatusOr<std::vector<TensorSpec>> NllLossShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(Shape loss, LossShape(ctx, 2));
  return std::vector<TensorSpec>{{ctx.input(0)->dtype, std::move(loss)}};
}

// The loss gradients: d_logits like log_prob (input 1), of the output_type where there is one.
StatusOr<std::vector<TensorSpec>> SoftmaxLossGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* dy, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* log_prob, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* labels, ctx.Required(2));
  ZG_RETURN_IF_NOT(dy->dtype == log_prob->dtype, "dY and log_prob have different dtypes");
  const Shape& s = log_prob->shape;
  ZG_RETURN_IF_NOT(s.size() >= 2, "log_prob must have rank 2 or more, got ", ShapeToString(s));
  ZG_RETURN_IF_NOT(labels->shape == LabelShapeOf(s), "labels ", ShapeToString(labels->shape),
                   " do not match log_prob ", ShapeToString(s));
  ZG_RETURN_IF_NOT(dy->shape.empty() || dy->shape == labels->shape, "dY ", ShapeToString(dy->shape),
                   " is neither a scalar nor like the labels");
  if (const TensorSpec* weights = ctx.input(3)) {
    ZG_RETURN_IF_NOT(weights->shape == Shape{s[1]}, "weights ", ShapeToString(weights->shape),
                     " must be [C] = [", s[1], "]");
  }
  ZG_ASSIGN_OR_RETURN(DataType out_type, OutputType(*ctx.node, log_prob->dtype));
  if (const TensorSpec* bias = ctx.input(5)) {
    ZG_RETURN_IF_NOT(bias->shape == s && bias->dtype == out_type, "bias ",
                     ShapeToString(bias->shape), " must be like d_logits");
  }
  return std::vector<TensorSpec>{{out_type, s}};
}

// Dropout from opset 10: the output like the data, a bool mask of its shape.
StatusOr<std::vector<TensorSpec>> DropoutShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  std::vector<TensorSpec> out = {*x};
  if (ctx.node->outputs().size() > 1) out.push_back({DataType::kBool, x->shape});
  return out;
}

// Dropout-7 keeps the mask in the data's dtype.
StatusOr<std::vector<TensorSpec>> Dropout7Shape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  std::vector<TensorSpec> out = {*x};
  if (ctx.node->outputs().size() > 1) out.push_back(*x);
  return out;
}

StatusOr<std::vector<TensorSpec>> DropoutGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* dy, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* mask, ctx.Required(1));
  ZG_RETURN_IF_NOT(mask->shape == dy->shape, "mask ", ShapeToString(mask->shape),
                   " differs from dy ", ShapeToString(dy->shape));
  return std::vector<TensorSpec>{*dy};
}

// FusedMatMul: transBatch moves an operand's first dimension behind its batch dimensions
// (perm 1, ..., r-2, 0, r-1), trans swaps its last two, then numpy matmul.
StatusOr<std::vector<TensorSpec>> FusedMatMulShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(1));
  ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
  ZG_ASSIGN_OR_RETURN(FusedMatMulOptions options, FusedMatMulOptionsOf(*ctx.node));
  ZG_ASSIGN_OR_RETURN(FusedMatMulShapes s, FusedMatMulShapesOf(a->shape, b->shape, options));
  return std::vector<TensorSpec>{{a->dtype, std::move(s.out)}};
}

// InPlaceAccumulatorV2: the updated flag [1], then the buffer like input 0.
StatusOr<std::vector<TensorSpec>> AccumulatorShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* buffer, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* value, ctx.Required(1));
  ZG_RETURN_IF_NOT(value->shape == buffer->shape, "value ", ShapeToString(value->shape),
                   " differs from the buffer ", ShapeToString(buffer->shape));
  std::vector<TensorSpec> out = {{DataType::kBool, {1}}};
  if (ctx.node->outputs().size() > 1) out.push_back(*buffer);
  return out;
}

OpContract SoftmaxCrossEntropyLoss(int since_version) {
  return {"",
          "SoftmaxCrossEntropyLoss",
          since_version,
          {{"scores", "T"}, {"labels", "Tind"}, {"weights", "T", kOptional}},
          {{"output", "T"}, {"log_prob", "T", kOptional}},
          {{"ignore_index", AttributeType::kInt, false, {}},
           {"reduction", AttributeType::kString, false, std::string_view("mean")}},
          {{"T", since_version >= 13 ? std::span<const DataType>(kFloatTypes)
                                     : std::span<const DataType>(kIeeeFloatTypes)},
           {"Tind", kIndexTypes}},
          SoftmaxLossShape};
}

OpContract NegativeLogLikelihoodLoss(int since_version) {
  return {"",
          "NegativeLogLikelihoodLoss",
          since_version,
          {{"input", "T"}, {"target", "Tind"}, {"weight", "T", kOptional}},
          {{"loss", "T"}},
          {{"ignore_index", AttributeType::kInt, false, {}},
           {"reduction", AttributeType::kString, false, std::string_view("mean")}},
          {{"T", kIeeeFloatTypes}, {"Tind", kIndexTypes}},
          NllLossShape};
}

OpContract Dropout(int since_version) {
  if (since_version < 10) {
    return {"",
            "Dropout",
            7,
            {{"data", "T"}},
            {{"output", "T"}, {"mask", "T", kOptional}},
            {{"ratio", AttributeType::kFloat, false, 0.5f}},
            {{"T", kIeeeFloatTypes}},
            Dropout7Shape};
  }
  if (since_version < 12) {
    return {"",
            "Dropout",
            10,
            {{"data", "T"}},
            {{"output", "T"}, {"mask", "T1", kOptional}},
            {{"ratio", AttributeType::kFloat, false, 0.5f}},
            {{"T", kIeeeFloatTypes}, {"T1", kBoolType}},
            DropoutShape};
  }
  return {"",
          "Dropout",
          since_version,
          {{"data", "T"}, {"ratio", "T1", kOptional}, {"training_mode", "T2", kOptional}},
          {{"output", "T"}, {"mask", "T2", kOptional}},
          {{"seed", AttributeType::kInt, false, {}}},
          {{"T", since_version >= 13 ? std::span<const DataType>(kFloatTypes)
                                     : std::span<const DataType>(kIeeeFloatTypes)},
           {"T1", kIeeeFloatTypes},
           {"T2", kBoolType}},
          DropoutShape};
}

}  // namespace

Status AddLossMatMulContracts(OpContracts& contracts) {
  ZG_RETURN_IF_ERROR(contracts.Add(SoftmaxCrossEntropyLoss(12)));
  ZG_RETURN_IF_ERROR(contracts.Add(SoftmaxCrossEntropyLoss(13)));
  ZG_RETURN_IF_ERROR(contracts.Add(NegativeLogLikelihoodLoss(12)));
  ZG_RETURN_IF_ERROR(contracts.Add(NegativeLogLikelihoodLoss(13)));
  for (int version : {7, 10, 12, 13}) ZG_RETURN_IF_ERROR(contracts.Add(Dropout(version)));

  const std::vector<OpAttribute> internal_attributes = {
      {"output_type", AttributeType::kInt, false, {}},
      {"reduction", AttributeType::kString, false, std::string_view("mean")}};
  ZG_RETURN_IF_ERROR(contracts.Add(
      {kMicrosoft,
       "SoftmaxCrossEntropyLossInternal",
       1,
       {{"scores", "T"},
        {"labels", "Tind"},
        {"weights", "T", kOptional},
        {"ignore_index", "I", kOptional, /*host=*/true}},
       {{"output", "TOut"}, {"log_prob", "T", kOptional}},
       internal_attributes,
       {{"T", kFloatTypes}, {"TOut", kFloatTypes}, {"Tind", kIndexTypes}, {"I", kInt64Type}},
       SoftmaxLossShape}));
  ZG_RETURN_IF_ERROR(contracts.Add(
      {kMicrosoft,
       "SoftmaxCrossEntropyLossGrad",
       1,
       {{"dY", "T"}, {"log_prob", "T"}, {"label", "Tind"}, {"weight", "T", kOptional}},
       {{"d_logits", "T"}},
       {{"ignore_index", AttributeType::kInt, false, {}},
        {"reduction", AttributeType::kString, false, std::string_view("mean")}},
       {{"T", kFloatTypes}, {"Tind", kIndexTypes}},
       SoftmaxLossGradShape}));
  ZG_RETURN_IF_ERROR(contracts.Add(
      {kMicrosoft,
       "SoftmaxCrossEntropyLossInternalGrad",
       1,
       {{"dY", "T"},
        {"log_prob", "T"},
        {"label", "Tind"},
        {"weight", "T", kOptional},
        {"ignore_index", "I", kOptional, /*host=*/true},
        {"bias", "TOut", kOptional}},
       {{"d_logits", "TOut"}},
       internal_attributes,
       {{"T", kFloatTypes}, {"TOut", kFloatTypes}, {"Tind", kIndexTypes}, {"I", kInt64Type}},
       SoftmaxLossGradShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({kMicrosoft,
                                    "DropoutGrad",
                                    1,
                                    {{"dy", "T"},
                                     {"mask", "T2"},
                                     {"ratio", "T1", kOptional},
                                     {"training_mode", "T2", kOptional}},
                                    {{"dx", "T"}},
                                    {},
                                    {{"T", kFloatTypes}, {"T1", kFloatTypes}, {"T2", kBoolType}},
                                    DropoutGradShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({kMicrosoft,
                                    "FusedMatMul",
                                    1,
                                    {{"A", "T"}, {"B", "T"}},
                                    {{"Y", "T"}},
                                    {{"alpha", AttributeType::kFloat, false, 1.0f},
                                     {"transA", AttributeType::kInt, false, int64_t{0}},
                                     {"transB", AttributeType::kInt, false, int64_t{0}},
                                     {"transBatchA", AttributeType::kInt, false, int64_t{0}},
                                     {"transBatchB", AttributeType::kInt, false, int64_t{0}}},
                                    {{"T", kFloatTypes}},
                                    FusedMatMulShape}));
  return contracts.Add(
      {kMicrosoft,
       "InPlaceAccumulatorV2",
       1,
       {{"accumulation_buffer", "T"}, {"value", "T_GRAD"}, {"overwrite_flag", "T_BOOL", kOptional}},
       {{"updated_flag", "T_BOOL"}, {"accumulation_buffer_out", "T", kOptional}},
       {},
       {{"T", kFloatTypes}, {"T_GRAD", kFloatTypes}, {"T_BOOL", kBoolType}},
       AccumulatorShape});
}

}  // namespace zerograph::contracts
