// Contracts of our own org.zerograph ops, version 1 (docs/formats.md and docs/architecture.md):
// the optimizers, the fused-buffer ops the sharding pass inserts, the collectives and the
// gradient ops that standard ONNX lacks.

#include <algorithm>

#include "ir/contracts/contracts.h"
#include "ir/contracts/optimizer_shape.h"
#include "ir/contracts/shape_functions.h"

namespace zerograph::contracts {
namespace {

using enum AttributeType;

constexpr DataType kOptimizerTypes[] = {kFloat32, kFloat16, kBFloat16, kFloat64};
// What mixed precision keeps gradients in.
constexpr DataType kGradientTypes[] = {kFloat32, kFloat16, kBFloat16};
// What the communicators reduce.
constexpr DataType kCollectiveTypes[] = {kFloat32, kFloat16, kBFloat16, kFloat64, kInt32, kInt64};

// AdamW(lr, step, X1..Xn, G1..Gn, M1..Mn, V1..Vn[, control]) -> (X1'..Xn', M1'..Mn', V1'..Vn')
StatusOr<std::vector<TensorSpec>> AdamWShape(const ShapeContext& ctx) {
  ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 0, kFloat32Type, "lr"));
  ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, kInt64Type, "step"));
  return OptimizerOutputs(ctx, {/*num_scalars=*/2, /*num_states=*/2, /*optional_control=*/true});
}

// SGD(lr, X1..Xn, G1..Gn[, control]) -> (X1'..Xn')
StatusOr<std::vector<TensorSpec>> SgdShape(const ShapeContext& ctx) {
  ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 0, kFloat32Type, "lr"));
  return OptimizerOutputs(ctx, {/*num_scalars=*/1, /*num_states=*/0, /*optional_control=*/true});
}

// SumOfSquares(X1..Xn) -> S: the fp32 scalar Σ x² over every element of every input; the inputs
// are fp32, fp16 or bf16 each (they may differ), of any shape.
StatusOr<std::vector<TensorSpec>> SumOfSquaresShape(const ShapeContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(i));
    const bool allowed = std::find(std::begin(kGradientTypes), std::end(kGradientTypes),
                                   x->dtype) != std::end(kGradientTypes);
    ZG_RETURN_IF_NOT(allowed, "input ", i, " is ", DataTypeName(x->dtype),
                     ", expected float, float16 or bfloat16");
  }
  return std::vector<TensorSpec>{{kFloat32, {}}};
}

// GradientControl(sum_squares[, scale, good_steps]) -> (control[3][, new_scale, new_good_steps])
StatusOr<std::vector<TensorSpec>> GradientControlShape(const ShapeContext& ctx) {
  ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 0, kFloat32Type, "sum_squares"));
  std::vector<TensorSpec> outputs = {{kFloat32, {3}}};
  if (ctx.input(1) != nullptr) {
    ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, kFloat32Type, "scale"));
    ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, kFloat32Type, "good_steps"));
    outputs.push_back({kFloat32, {}});
    outputs.push_back({kFloat32, {}});
  }
  return outputs;
}

// GradientControl's attributes in range, and dynamic loss scaling all there or all absent: scale
// and good_steps in, new_scale and new_good_steps out.
Status CheckGradientControl(const Node& node) {
  ZG_ASSIGN_OR_RETURN(const float max_norm, ContractFloat(node, "max_norm"));
  ZG_ASSIGN_OR_RETURN(const float growth, ContractFloat(node, "growth_factor"));
  ZG_ASSIGN_OR_RETURN(const float backoff, ContractFloat(node, "backoff_factor"));
  ZG_ASSIGN_OR_RETURN(const int64_t interval, ContractInt(node, "growth_interval"));
  ZG_RETURN_IF_NOT(max_norm >= 0, "max_norm must be >= 0 (0: no clipping), got ", max_norm);
  ZG_RETURN_IF_NOT(growth >= 1, "growth_factor must be >= 1, got ", growth);
  ZG_RETURN_IF_NOT(backoff > 0 && backoff <= 1, "backoff_factor must be in (0, 1], got ", backoff);
  ZG_RETURN_IF_NOT(interval >= 1, "growth_interval must be >= 1, got ", interval);
  auto present = [&](size_t i) { return i < node.num_inputs() && node.input(i) != nullptr; };
  ZG_RETURN_IF_NOT(present(1) == present(2),
                   "scale and good_steps must be given together (dynamic loss scaling) or not at "
                   "all");
  const size_t outputs = present(1) ? 3 : 1;
  ZG_RETURN_IF_NOT(node.num_outputs() == outputs, "has ", node.num_outputs(), " outputs, expected ",
                   outputs, present(1) ? " (control, new_scale, new_good_steps)" : " (control)");
  return Status::Ok();
}

// The ranks a collective spans: its `nranks` attribute, else the graph's.
StatusOr<int64_t> Ranks(const ShapeContext& ctx) {
  if (!ctx.node->HasAttribute("nranks")) return ctx.nranks;
  ZG_ASSIGN_OR_RETURN(int64_t nranks, ContractInt(*ctx.node, "nranks"));
  ZG_RETURN_IF_NOT(nranks >= 1, "nranks must be positive, got ", nranks);
  return nranks;
}

// CoalesceTensors(t1..tn) -> fused[total]: ti at offsets[i]; `total`, or the inputs' end rounded up
// to `alignment`.
StatusOr<std::vector<TensorSpec>> CoalesceShape(const ShapeContext& ctx) {
  const Node& node = *ctx.node;
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ContractInts(node, "offsets"));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> numels, ContractInts(node, "numels"));
  ZG_RETURN_IF_NOT(offsets.size() == ctx.num_inputs() && numels.size() == ctx.num_inputs(),
                   "offsets and numels need one entry per input (", ctx.num_inputs(), "), got ",
                   offsets.size(), " and ", numels.size());
  ZG_ASSIGN_OR_RETURN(const TensorSpec* first, ctx.Required(0));
  int64_t end = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* spec, ctx.Required(i));
    ZG_RETURN_IF_NOT(spec->dtype == first->dtype, "input ", i, " is ", DataTypeName(spec->dtype),
                     ", input 0 is ", DataTypeName(first->dtype));
    ZG_RETURN_IF_NOT(NumElements(spec->shape) == numels[i], "input ", i, " ",
                     ShapeToString(spec->shape), " has ", NumElements(spec->shape),
                     " elements, numels says ", numels[i]);
    end = std::max(end, offsets[i] + numels[i]);
  }
  int64_t total;
  if (node.HasAttribute("total")) {
    ZG_ASSIGN_OR_RETURN(total, ContractInt(node, "total"));
  } else {
    ZG_ASSIGN_OR_RETURN(int64_t alignment, ContractInt(node, "alignment"));
    ZG_RETURN_IF_NOT(alignment >= 1, "alignment must be positive, got ", alignment);
    total = (end + alignment - 1) / alignment * alignment;
  }
  ZG_RETURN_IF_NOT(total >= end, "total ", total, " is less than the end of the inputs, ", end);
  return std::vector<TensorSpec>{{first->dtype, {total}}};
}

// TensorViews(fused) -> t1..tn: ti is shapes' next ranks[i] entries, at offsets[i].
StatusOr<std::vector<TensorSpec>> TensorViewsShape(const ShapeContext& ctx) {
  const Node& node = *ctx.node;
  ZG_ASSIGN_OR_RETURN(const TensorSpec* fused, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ContractInts(node, "offsets"));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ContractInts(node, "shapes"));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, ContractInts(node, "ranks"));
  ZG_RETURN_IF_NOT(offsets.size() == node.num_outputs() && ranks.size() == node.num_outputs(),
                   "offsets and ranks need one entry per output (", node.num_outputs(), "), got ",
                   offsets.size(), " and ", ranks.size());
  const int64_t total = NumElements(fused->shape);
  std::vector<TensorSpec> outputs;
  size_t next = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int64_t rank = ranks[i];
    ZG_RETURN_IF_NOT(rank >= 0 && next + static_cast<size_t>(rank) <= dims.size(), "ranks ",
                     ShapeToString(ranks), " do not match the ", dims.size(), " entries of shapes");
    Shape shape(dims.begin() + static_cast<int64_t>(next),
                dims.begin() + static_cast<int64_t>(next) + rank);
    next += static_cast<size_t>(rank);
    const int64_t n = NumElements(shape);
    ZG_RETURN_IF_NOT(offsets[i] >= 0 && offsets[i] + n <= total, "view ", i, " ",
                     ShapeToString(shape), " at ", offsets[i], " exceeds the ", total,
                     " elements of the input");
    outputs.push_back({fused->dtype, std::move(shape)});
  }
  ZG_RETURN_IF_NOT(next == dims.size(), "shapes has ", dims.size(), " entries, ranks sum to ",
                   next);
  return outputs;
}

// LocalShard(fused[N·S]) -> shard[S] and ReduceScatter alike.
StatusOr<std::vector<TensorSpec>> ShardShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* fused, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t nranks, Ranks(ctx));
  const int64_t total = NumElements(fused->shape);
  ZG_RETURN_IF_NOT(total % nranks == 0, "the fused buffer's ", total,
                   " elements do not split into ", nranks, " equal shards");
  return std::vector<TensorSpec>{{fused->dtype, {total / nranks}}};
}

// AllGather(shard[S], deps...) -> fused[N·S]
StatusOr<std::vector<TensorSpec>> GatherShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* shard, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t nranks, Ranks(ctx));
  return std::vector<TensorSpec>{{shard->dtype, {NumElements(shard->shape) * nranks}}};
}

// Attribute lengths that follow the node's input or output count.
Status CheckCoalesce(const Node& node) {
  ZG_RETURN_IF_NOT(node.HasAttribute("total") || node.HasAttribute("alignment"),
                   "needs attribute 'total' or 'alignment'");
  for (std::string_view name : {"offsets", "numels"}) {
    std::optional<std::span<const int64_t>> values = node.GetInts(name);
    ZG_RETURN_IF_NOT(values && values->size() == node.num_inputs(), "attribute '", name, "' has ",
                     values ? values->size() : 0, " entries, expected ", node.num_inputs());
  }
  return Status::Ok();
}
Status CheckTensorViews(const Node& node) {
  for (std::string_view name : {"offsets", "ranks"}) {
    std::optional<std::span<const int64_t>> values = node.GetInts(name);
    ZG_RETURN_IF_NOT(values && values->size() == node.num_outputs(), "attribute '", name, "' has ",
                     values ? values->size() : 0, " entries, expected ", node.num_outputs());
  }
  return Status::Ok();
}
Status CheckReduceOp(const Node& node) {
  std::optional<std::string_view> reduce = node.GetString("reduce_op");
  ZG_RETURN_IF_NOT(!reduce || *reduce == "sum" || *reduce == "avg",
                   "reduce_op must be 'sum' or 'avg', not '", *reduce, "'");
  return Status::Ok();
}

std::vector<int64_t> CoalesceOffsets(const Node& node) {
  std::optional<std::span<const int64_t>> offsets = node.GetInts("offsets");
  return offsets ? std::vector<int64_t>(offsets->begin(), offsets->end()) : std::vector<int64_t>();
}

// AdamW's modes (docs/formats.md): adam_mode 0 (PyTorch) or 1 (Hugging Face); correct_bias 0 or
// 1, and PyTorch's form always corrects the bias (as ONNX Runtime's AdamWOptimizer requires).
Status CheckAdamWModes(const Node& node) {
  ZG_ASSIGN_OR_RETURN(const int64_t mode, ContractInt(node, "adam_mode"));
  ZG_ASSIGN_OR_RETURN(const int64_t correct_bias, ContractInt(node, "correct_bias"));
  ZG_RETURN_IF_NOT(mode == 0 || mode == 1,
                   "adam_mode must be 0 (PyTorch) or 1 (Hugging Face), got ", mode);
  ZG_RETURN_IF_NOT(correct_bias == 0 || correct_bias == 1, "correct_bias must be 0 or 1, got ",
                   correct_bias);
  ZG_RETURN_IF_NOT(mode == 1 || correct_bias == 1, "adam_mode 0 (PyTorch) requires correct_bias 1");
  return Status::Ok();
}

OpContract Optimizer(std::string_view name, int num_scalars, int num_states, ShapeFunction infer,
                     std::vector<OpAttribute> attributes, NodeCheck check = nullptr) {
  std::vector<OpFormal> inputs = {{"lr", "tensor(float)"}};
  if (num_scalars == 2) inputs.push_back({"step", "tensor(int64)"});
  inputs.push_back({"tensors", "T", kVariadic});
  return {kZerographDomain,
          name,
          1,
          std::move(inputs),
          {{"updated", "T", kVariadic}},
          std::move(attributes),
          {{"tensor(float)", kFloat32Type}, {"tensor(int64)", kInt64Type}, {"T", kOptimizerTypes}},
          infer,
          OptimizerLayout{num_scalars, num_states, /*optional_control=*/true},
          check};
}

OpContract Collective(std::string_view name, std::vector<OpFormal> inputs, ShapeFunction infer,
                      std::vector<OpAttribute> attributes) {
  attributes.push_back({"group", AttributeType::kString, false, {}});
  return {
      kZerographDomain,          name,  1,  std::move(inputs), {{"y", "T"}}, std::move(attributes),
      {{"T", kCollectiveTypes}}, infer, {}, CheckReduceOp};
}

}  // namespace

Status AddZerographContracts(OpContracts& contracts) {
  ZG_RETURN_IF_ERROR(contracts.Add(Optimizer("AdamW", 2, 2, AdamWShape,
                                             {{"beta1", kFloat, false, 0.9f},
                                              {"beta2", kFloat, false, 0.999f},
                                              {"epsilon", kFloat, false, 1e-8f},
                                              {"weight_decay", kFloat, false, 0.01f},
                                              {"adam_mode", kInt, false, int64_t{0}},
                                              {"correct_bias", kInt, false, int64_t{1}}},
                                             CheckAdamWModes)));
  ZG_RETURN_IF_ERROR(contracts.Add(Optimizer("SGD", 1, 0, SgdShape, {})));
  // The gradient norm and loss scale of mixed precision (docs/formats.md): SumOfSquares over the
  // gradients, GradientControl turning it into the optimizers' control input.
  ZG_RETURN_IF_ERROR(contracts.Add({kZerographDomain,
                                    "SumOfSquares",
                                    1,
                                    {{"X", "T", kVariadic}},
                                    {{"S", "tensor(float)"}},
                                    {},
                                    {{"T", kGradientTypes}, {"tensor(float)", kFloat32Type}},
                                    SumOfSquaresShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({kZerographDomain,
                                    "GradientControl",
                                    1,
                                    {{"sum_squares", "tensor(float)"},
                                     {"scale", "tensor(float)", kOptional},
                                     {"good_steps", "tensor(float)", kOptional}},
                                    {{"control", "tensor(float)"},
                                     {"new_scale", "tensor(float)", kOptional},
                                     {"new_good_steps", "tensor(float)", kOptional}},
                                    {{"max_norm", kFloat, false, 0.0f},
                                     {"growth_factor", kFloat, false, 2.0f},
                                     {"backoff_factor", kFloat, false, 0.5f},
                                     {"growth_interval", kInt, false, int64_t{2000}}},
                                    {{"tensor(float)", kFloat32Type}},
                                    GradientControlShape,
                                    {},
                                    CheckGradientControl}));
  // ReluGrad(dY, X) = dY where X > 0, else 0.
  ZG_RETURN_IF_ERROR(contracts.Add({kZerographDomain,
                                    "ReluGrad",
                                    1,
                                    {{"dY", "T"}, {"X", "T"}},
                                    {{"dX", "T"}},
                                    {},
                                    {{"T", kFloatTypes}},
                                    SameShapeBinary}));
  OpContract coalesce{kZerographDomain,
                      "CoalesceTensors",
                      1,
                      {{"tensors", "T", kVariadic}},
                      {{"fused", "T"}},
                      {{"offsets", kInts, true, {}},
                       {"numels", kInts, true, {}},
                       {"total", kInt, false, {}},
                       {"alignment", kInt, false, {}}},
                      {{"T", kAllTypes}},
                      CoalesceShape,
                      {},
                      CheckCoalesce};
  coalesce.memory.input_offsets_in_output = CoalesceOffsets;
  ZG_RETURN_IF_ERROR(contracts.Add(std::move(coalesce)));
  ZG_RETURN_IF_ERROR(contracts.Add(
      {kZerographDomain,
       "TensorViews",
       1,
       {{"fused", "T"}},
       {{"views", "T", kVariadic}},
       {{"offsets", kInts, true, {}}, {"shapes", kInts, true, {}}, {"ranks", kInts, true, {}}},
       {{"T", kAllTypes}},
       TensorViewsShape,
       {},
       CheckTensorViews}));
  OpContract local_shard{kZerographDomain,   "LocalShard",     1,
                         {{"fused", "T"}},   {{"shard", "T"}}, {},
                         {{"T", kAllTypes}}, ShardShape};
  local_shard.memory.selects_rank_shard = true;
  ZG_RETURN_IF_ERROR(contracts.Add(std::move(local_shard)));
  // Nop(x, deps...) -> x: orders a stream after the deps' producers.
  ZG_RETURN_IF_ERROR(contracts.Add({kZerographDomain,
                                    "Nop",
                                    1,
                                    {{"x", "T"}, {"deps", "", kVariadicOrNone}},
                                    {{"y", "T"}},
                                    {},
                                    {{"T", kAllTypes}},
                                    SameAsFirstInput}));
  ZG_RETURN_IF_ERROR(contracts.Add(Collective(
      "ReduceScatter", {{"fused", "T"}}, ShardShape,
      {{"nranks", kInt, true, {}}, {"reduce_op", AttributeType::kString, false, "sum"}})));
  OpContract all_gather =
      Collective("AllGather", {{"shard", "T"}, {"deps", "", kVariadicOrNone}}, GatherShape,
                 {{"nranks", kInt, true, {}}, {"axis", kInt, false, int64_t{0}}});
  all_gather.memory.gathers_rank_shards = true;
  ZG_RETURN_IF_ERROR(contracts.Add(std::move(all_gather)));
  return contracts.Add(Collective(
      "AllReduce", {{"x", "T"}}, SameAsFirstInput,
      {{"nranks", kInt, false, {}}, {"reduce_op", AttributeType::kString, false, "sum"}}));
}

}  // namespace zerograph::contracts
