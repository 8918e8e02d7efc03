// Contracts of the ops that reduce along axes: ONNX's reductions, ArgMax/ArgMin, Softmax,
// LogSoftmax and LayerNormalization (onnx/defs/reduction, math, nn), and ONNX Runtime's training
// ops of the same family in com.microsoft (orttraining/core/graph/training_op_defs.cc,
// core/graph/contrib_ops/contrib_defs.cc): their gradients, RMS normalization, ReduceSumTraining.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "ir/contracts/contracts.h"
#include "ir/contracts/shape_functions.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace zerograph::contracts {
namespace {

constexpr std::string_view kMicrosoftDomain = "com.microsoft";

// --- Reductions: axes from the attribute (older versions) or the host input 1.
StatusOr<std::vector<TensorSpec>> ReduceShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  const Node& node = *ctx.node;
  std::vector<int64_t> axes;
  if (node.HasAttribute("axes")) {
    ZG_ASSIGN_OR_RETURN(axes, ContractInts(node, "axes"));
  }
  if (ctx.input(1) != nullptr) {
    ZG_RETURN_IF_NOT(!node.HasAttribute("axes"), "axes given both as attribute and as input");
    const HostValue* value = ctx.value(1);
    ZG_RETURN_IF_NOT(value != nullptr, "the axes input must be a constant");
    ZG_ASSIGN_OR_RETURN(axes, ReadInts(*value, "axes"));
  }
  ZG_ASSIGN_OR_RETURN(int64_t keepdims, ContractInt(node, "keepdims"));
  int64_t noop = 0;
  if (node.HasAttribute("noop_with_empty_axes")) {
    ZG_ASSIGN_OR_RETURN(noop, ContractInt(node, "noop_with_empty_axes"));
  }
  if (axes.empty() && noop != 0) return std::vector<TensorSpec>{*x};
  ZG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                      ReducedAxes(axes, static_cast<int64_t>(x->shape.size()), noop != 0));
  TensorSpec out{x->dtype, {}};
  for (size_t d = 0; d < x->shape.size(); ++d) {
    if (!reduced[d]) {
      out.shape.push_back(x->shape[d]);
    } else if (keepdims != 0) {
      out.shape.push_back(1);
    }
  }
  return std::vector<TensorSpec>{std::move(out)};
}

// keepdims = 0 with axes known and not empty drops dimensions: the output never has the input's
// shape (a layer's bias gradient, ReduceSum of its output gradient). Anything else takes shapes.
std::optional<bool> ReductionKeepsShape(const Node& node, size_t input) {
  if (input != 0 || node.GetInt("keepdims").value_or(1) != 0) return std::nullopt;
  bool axes_given = false;
  if (std::optional<std::span<const int64_t>> axes = node.GetInts("axes")) {
    axes_given = !axes->empty();
  } else if (node.num_inputs() > 1 && node.input(1) != nullptr) {
    const Tensor* axes = node.input(1)->initializer();
    axes_given = axes != nullptr && axes->dims().size() == 1 && axes->dims()[0] > 0;
  }
  if (axes_given) return false;
  return std::nullopt;
}

enum class Axes { kAttribute, kInput };

OpContract Reduce(std::string_view name, int since_version, Axes axes,
                  std::span<const DataType> types) {
  OpContract contract{"",
                      name,
                      since_version,
                      {{"data", "T"}},
                      {{"reduced", "T"}},
                      {{"keepdims", AttributeType::kInt, false, int64_t{1}}},
                      {{"T", types}},
                      ReduceShape};
  contract.keeps_input_shape = ReductionKeepsShape;
  if (axes == Axes::kInput) {
    contract.inputs.push_back({"axes", "tensor(int64)", kOptional, /*host=*/true});
    contract.type_constraints.push_back({"tensor(int64)", kInt64Type});
    contract.attributes.push_back({"noop_with_empty_axes", AttributeType::kInt, false, int64_t{0}});
  } else {
    contract.attributes.push_back({"axes", AttributeType::kInts, false, {}});
  }
  return contract;
}

// ReduceSum took its axes as an input at 13, the others at 18; bfloat16 came at 13.
constexpr std::string_view kReductionsWithAxesInputAt18[] = {
    "ReduceMean", "ReduceMax", "ReduceMin",    "ReduceProd",     "ReduceSumSquare",
    "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp"};

// --- ArgMax, ArgMin: one axis, int64 indices.
StatusOr<std::vector<TensorSpec>> ArgReduceShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_ASSIGN_OR_RETURN(int64_t keepdims, ContractInt(*ctx.node, "keepdims"));
  ZG_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, static_cast<int64_t>(x->shape.size())));
  TensorSpec out{DataType::kInt64, x->shape};
  if (keepdims != 0) {
    out.shape[static_cast<size_t>(axis)] = 1;
  } else {
    out.shape.erase(out.shape.begin() + axis);
  }
  return std::vector<TensorSpec>{std::move(out)};
}

OpContract ArgReduce(std::string_view name, int since_version) {
  OpContract contract{"",
                      name,
                      since_version,
                      {{"data", "T"}},
                      {{"reduced", "tensor(int64)"}},
                      {{"axis", AttributeType::kInt, false, int64_t{0}},
                       {"keepdims", AttributeType::kInt, false, int64_t{1}}},
                      {{"T", since_version >= 13 ? std::span<const DataType>(kMatMulTypes)
                                                 : std::span<const DataType>(kReduceTypesBefore13)},
                       {"tensor(int64)", kInt64Type}},
                      ArgReduceShape};
  if (since_version >= 12) {
    contract.attributes.push_back({"select_last_index", AttributeType::kInt, false, int64_t{0}});
  }
  return contract;
}

// --- Softmax, LogSoftmax and their gradients: the input's shape, an axis within its rank.
StatusOr<std::vector<TensorSpec>> SoftmaxShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_RETURN_IF_ERROR(NormalizeAxis(axis, static_cast<int64_t>(x->shape.size())).status());
  return std::vector<TensorSpec>{*x};
}

StatusOr<std::vector<TensorSpec>> SoftmaxGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(std::vector<TensorSpec> out, SameShapeBinary(ctx));
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_RETURN_IF_ERROR(NormalizeAxis(axis, static_cast<int64_t>(out[0].shape.size())).status());
  return out;
}

// Before 13 the input is coerced to 2-D at `axis` (default 1); from 13 the op runs along `axis`
// alone (default -1).
OpContract Softmax(std::string_view name, int since_version) {
  return {"",
          name,
          since_version,
          {{"input", "T"}},
          {{"output", "T"}},
          {{"axis", AttributeType::kInt, false, int64_t{since_version >= 13 ? -1 : 1}}},
          {{"T", since_version >= 13 ? std::span<const DataType>(kFloatTypes)
                                     : std::span<const DataType>(kIeeeFloatTypes)}},
          SoftmaxShape};
}

OpContract SoftmaxGrad(std::string_view name) {
  return {kMicrosoftDomain,
          name,
          1,
          {{"dY", "T"}, {"Y", "T"}},
          {{"dX", "T"}},
          {{"axis", AttributeType::kInt, false, int64_t{-1}}},
          {{"T", kFloatTypes}},
          SoftmaxGradShape};
}

// --- Normalization over the dimensions from `axis` on.

// X's shape up to `axis`, then ones: the shape of the per-row statistics.
StatusOr<Shape> StatisticsShape(const ShapeContext& ctx, const TensorSpec& x) {
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, static_cast<int64_t>(x.shape.size())));
  Shape shape = x.shape;
  for (size_t d = static_cast<size_t>(axis); d < shape.size(); ++d) shape[d] = 1;
  return shape;
}

// `param` (scale, bias) broadcasts over X's normalized dimensions.
Status CheckNormalizedParam(const ShapeContext& ctx, const TensorSpec& x, const TensorSpec& param,
                            std::string_view what) {
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, static_cast<int64_t>(x.shape.size())));
  ZG_RETURN_IF_NOT(param.dtype == x.dtype, what, " has dtype ", DataTypeName(param.dtype),
                   ", X has ", DataTypeName(x.dtype));
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  StatusOr<Shape> broadcast = BroadcastShapes(param.shape, normalized);
  ZG_RETURN_IF_NOT(broadcast.ok() && *broadcast == normalized, what, " ",
                   ShapeToString(param.shape), " does not broadcast to the normalized dimensions ",
                   ShapeToString(normalized));
  return Status::Ok();
}

// Y like X; every further output (Mean, InvStdDev) the fp32 statistics of each row.
StatusOr<std::vector<TensorSpec>> NormalizationShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* scale, ctx.Required(1));
  ZG_RETURN_IF_ERROR(CheckNormalizedParam(ctx, *x, *scale, "scale"));
  if (const TensorSpec* bias = ctx.input(2)) {
    ZG_RETURN_IF_ERROR(CheckNormalizedParam(ctx, *x, *bias, "bias"));
  }
  ZG_ASSIGN_OR_RETURN(Shape statistics, StatisticsShape(ctx, *x));
  std::vector<TensorSpec> out = {*x};
  for (size_t i = 1; i < ctx.node->num_outputs(); ++i) {
    out.push_back({DataType::kFloat32, statistics});
  }
  return out;
}

// X_grad like X, then scale_grad (and bias_grad) like scale.
StatusOr<std::vector<TensorSpec>> NormalizationGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* dy, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* scale, ctx.Required(2));
  ZG_RETURN_IF_NOT(dy->dtype == x->dtype && dy->shape == x->shape, "Y_grad ",
                   ShapeToString(dy->shape), " differs from X ", ShapeToString(x->shape));
  ZG_RETURN_IF_ERROR(CheckNormalizedParam(ctx, *x, *scale, "scale"));
  ZG_ASSIGN_OR_RETURN(Shape statistics, StatisticsShape(ctx, *x));
  for (size_t i = 3; i < ctx.num_inputs(); ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* stat, ctx.Required(i));
    ZG_RETURN_IF_NOT(NumElements(stat->shape) == NumElements(statistics), "statistics input ", i,
                     " ", ShapeToString(stat->shape), " is not one per row of ",
                     ShapeToString(statistics));
  }
  std::vector<TensorSpec> out = {*x};
  for (size_t i = 1; i < ctx.node->num_outputs(); ++i) out.push_back(*scale);
  return out;
}

// The gradients carry them too (ONNX Runtime's training graphs set all three), although only
// axis matters to them: the statistics come as inputs.
std::vector<OpAttribute> NormalizationAttributes() {
  return {{"axis", AttributeType::kInt, false, int64_t{-1}},
          {"epsilon", AttributeType::kFloat, false, 1e-5f},
          {"stash_type", AttributeType::kInt, false, int64_t{1}}};
}

}  // namespace

Status AddReductionContracts(OpContracts& contracts) {
  ZG_RETURN_IF_ERROR(contracts.Add(Reduce("ReduceSum", 1, Axes::kAttribute, kReduceTypesBefore13)));
  ZG_RETURN_IF_ERROR(contracts.Add(Reduce("ReduceSum", 13, Axes::kInput, kMatMulTypes)));
  for (std::string_view name : kReductionsWithAxesInputAt18) {
    ZG_RETURN_IF_ERROR(contracts.Add(Reduce(name, 1, Axes::kAttribute, kReduceTypesBefore13)));
    ZG_RETURN_IF_ERROR(contracts.Add(Reduce(name, 13, Axes::kAttribute, kMatMulTypes)));
    ZG_RETURN_IF_ERROR(contracts.Add(Reduce(name, 18, Axes::kInput, kMatMulTypes)));
  }
  for (std::string_view name : {"ArgMax", "ArgMin"}) {
    for (int version : {1, 12, 13}) ZG_RETURN_IF_ERROR(contracts.Add(ArgReduce(name, version)));
  }
  for (std::string_view name : {"Softmax", "LogSoftmax"}) {
    for (int version : {1, 13}) ZG_RETURN_IF_ERROR(contracts.Add(Softmax(name, version)));
  }
  ZG_RETURN_IF_ERROR(
      contracts.Add({"",
                     "LayerNormalization",
                     17,
                     {{"X", "T"}, {"Scale", "T"}, {"B", "T", kOptional}},
                     {{"Y", "T"}, {"Mean", "U", kOptional}, {"InvStdDev", "U", kOptional}},
                     NormalizationAttributes(),
                     {{"T", kFloatTypes}, {"U", kFloat32Type}},
                     NormalizationShape}));

  // ONNX Runtime's training ops.
  ZG_RETURN_IF_ERROR(contracts.Add(SoftmaxGrad("SoftmaxGrad_13")));
  ZG_RETURN_IF_ERROR(contracts.Add(SoftmaxGrad("LogSoftmaxGrad_13")));
  ZG_RETURN_IF_ERROR(contracts.Add({kMicrosoftDomain,
                                    "SimplifiedLayerNormalization",
                                    1,
                                    {{"X", "T"}, {"scale", "T"}},
                                    {{"Y", "T"}, {"inv_std_var", "U", kOptional}},
                                    NormalizationAttributes(),
                                    {{"T", kFloatTypes}, {"U", kFloat32Type}},
                                    NormalizationShape}));
  ZG_RETURN_IF_ERROR(contracts.Add(
      {kMicrosoftDomain,
       "LayerNormalizationGrad",
       1,
       {{"Y_grad", "T"}, {"X", "T"}, {"scale", "T"}, {"mean", "U"}, {"inv_std_var", "U"}},
       {{"X_grad", "T"}, {"scale_grad", "T"}, {"bias_grad", "T"}},
       NormalizationAttributes(),
       {{"T", kFloatTypes}, {"U", kFloat32Type}},
       NormalizationGradShape}));
  ZG_RETURN_IF_ERROR(
      contracts.Add({kMicrosoftDomain,
                     "SimplifiedLayerNormalizationGrad",
                     1,
                     {{"Y_grad", "T"}, {"X", "T"}, {"scale", "T"}, {"inv_std_var", "U"}},
                     {{"X_grad", "T"}, {"scale_grad", "T"}},
                     NormalizationAttributes(),
                     {{"T", kFloatTypes}, {"U", kFloat32Type}},
                     NormalizationGradShape}));
  // ReduceSum-13 whose axes input is required.
  OpContract reduce_sum_training = Reduce("ReduceSumTraining", 1, Axes::kInput, kMatMulTypes);
  reduce_sum_training.domain = kMicrosoftDomain;
  reduce_sum_training.inputs[1].arity = kSingle;
  return contracts.Add(std::move(reduce_sum_training));
}

}  // namespace zerograph::contracts
