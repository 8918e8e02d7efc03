// Contracts of ONNX's shape and data-movement ops (onnx/defs/tensor/defs.cc and old.cc) and of
// ONNX Runtime's GatherGrad (com.microsoft, orttraining's training_op_defs.cc). Shapes that come
// from values (Reshape's shape, Slice's starts, Tile's repeats) are host-read inputs: their values
// must be known before running.

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "ir/contracts/contracts.h"
#include "ir/contracts/shape_functions.h"
#include "zerograph/ir/data_movement_shapes.h"

namespace zerograph::contracts {
namespace {

// Every fixed-size dtype but bfloat16, which most of these ops took from opset 13 on.
constexpr DataType kAllTypesBefore13[] = {kFloat32, kFloat16, kFloat64, kInt64,  kInt32,  kInt8,
                                          kUint8,   kBool,    kInt16,   kUint16, kUint32, kUint64};
constexpr DataType kRangeTypes[] = {kFloat32, kFloat64, kInt16, kInt32, kInt64};

using Specs = StatusOr<std::vector<TensorSpec>>;

// The integers of host-read input `i`, which must be known before running.
StatusOr<std::vector<int64_t>> HostInts(const ShapeContext& ctx, size_t i, std::string_view what) {
  const HostValue* value = ctx.value(i);
  ZG_RETURN_IF_NOT(value != nullptr, "the ", what,
                   " input must be known before running (a constant, an initializer or a value "
                   "computed from shapes)");
  return ReadInts(*value, what);
}

// --- Reshape per ONNX: 0 copies a dimension unless `allowzero`, -1 is inferred.
Specs ReshapeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> requested, HostInts(ctx, 1, "shape"));
  int64_t allowzero = 0;
  if (ctx.node->HasAttribute("allowzero")) {
    ZG_ASSIGN_OR_RETURN(allowzero, ContractInt(*ctx.node, "allowzero"));
  }
  const Shape& input = x->shape;
  Shape out(requested.size());
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      ZG_RETURN_IF_NOT(inferred < 0, "shape ", ShapeToString(requested), " has two -1");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (d == 0 && allowzero == 0) {
      ZG_RETURN_IF_NOT(i < input.size(), "shape ", ShapeToString(requested), " copies dimension ",
                       i, " of ", ShapeToString(input), ", which has none");
      out[i] = input[i];
    } else {
      ZG_RETURN_IF_NOT(d >= 0, "shape ", ShapeToString(requested), " has a negative dimension");
      out[i] = d;
    }
    known *= out[i];
  }
  const int64_t total = NumElements(input);
  if (inferred >= 0) {
    ZG_RETURN_IF_NOT(known != 0 && total % known == 0, "cannot infer -1 in shape ",
                     ShapeToString(requested), " for ", total, " elements");
    out[static_cast<size_t>(inferred)] = total / known;
  }
  ZG_RETURN_IF_NOT(NumElements(out) == total, "cannot reshape ", ShapeToString(input), " (", total,
                   " elements) to ", ShapeToString(requested));
  return std::vector<TensorSpec>{{x->dtype, std::move(out)}};
}

OpContract Reshape(int since_version) {
  OpContract contract{"",
                      "Reshape",
                      since_version,
                      {{"data", "T"}, {"shape", "tensor(int64)", kSingle, /*host=*/true}},
                      {{"reshaped", "T"}},
                      {},
                      {{"T", kAllTypes}, {"tensor(int64)", kInt64Type}},
                      ReshapeShape};
  if (since_version >= 14) {
    contract.attributes.push_back({"allowzero", AttributeType::kInt, false, int64_t{0}});
  }
  return contract;
}

Specs TransposeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  std::optional<std::vector<int64_t>> perm;
  if (ctx.node->HasAttribute("perm")) {
    ZG_ASSIGN_OR_RETURN(perm, ContractInts(*ctx.node, "perm"));
  }
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> axes, TransposePerm(perm, x->shape.size()));
  Shape out(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) out[i] = x->shape[static_cast<size_t>(axes[i])];
  return std::vector<TensorSpec>{{x->dtype, std::move(out)}};
}

Specs CastShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t to, ContractInt(*ctx.node, "to"));
  std::optional<DataType> target = DataTypeFromOnnx(static_cast<int32_t>(to));
  ZG_RETURN_IF_NOT(target.has_value(), "attribute 'to' = ", to, " is not a data type");
  return std::vector<TensorSpec>{{*target, x->shape}};
}

// CastLike: input 0's shape in input 1's dtype.
Specs CastLikeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* like, ctx.Required(1));
  return std::vector<TensorSpec>{{like->dtype, x->shape}};
}

// --- Shape and Size: values computed from the input's shape alone.
StatusOr<std::vector<int64_t>> ShapeValues(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t start = 0;
  int64_t end = rank;
  if (ctx.node->HasAttribute("start")) {
    ZG_ASSIGN_OR_RETURN(start, ContractInt(*ctx.node, "start"));
  }
  if (ctx.node->HasAttribute("end")) {
    ZG_ASSIGN_OR_RETURN(end, ContractInt(*ctx.node, "end"));
  }
  auto clamp = [rank](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  return std::vector<int64_t>(x->shape.begin() + start, x->shape.begin() + end);
}

Specs ShapeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> values, ShapeValues(ctx));
  return std::vector<TensorSpec>{{kInt64, {static_cast<int64_t>(values.size())}}};
}

StatusOr<std::vector<int64_t>> SizeValues(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  return std::vector<int64_t>{NumElements(x->shape)};
}

Specs SizeShape(const ShapeContext& ctx) {
  ZG_RETURN_IF_ERROR(ctx.Required(0).status());
  return std::vector<TensorSpec>{{kInt64, {}}};
}

// --- Expand: input 0 and the shape broadcast both ways.
Specs ExpandShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, HostInts(ctx, 1, "shape"));
  ZG_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(x->shape, shape));
  return std::vector<TensorSpec>{{x->dtype, std::move(out)}};
}

// --- Concat: inputs of one dtype and rank, equal but along `axis`.
Specs ConcatShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* first, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const int64_t attr, ContractInt(*ctx.node, "axis"));
  const int64_t rank = static_cast<int64_t>(first->shape.size());
  ZG_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(attr, rank));
  TensorSpec out = *first;
  out.shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* in, ctx.Required(i));
    ZG_RETURN_IF_NOT(in->dtype == first->dtype, "input ", i, " is ", DataTypeName(in->dtype),
                     ", input 0 ", DataTypeName(first->dtype));
    bool agrees = in->shape.size() == first->shape.size();
    for (size_t d = 0; agrees && d < in->shape.size(); ++d) {
      agrees = static_cast<int64_t>(d) == axis || in->shape[d] == first->shape[d];
    }
    ZG_RETURN_IF_NOT(agrees, "input ", i, " ", ShapeToString(in->shape),
                     " does not concatenate with input 0 ", ShapeToString(first->shape),
                     " along axis ", axis);
    out.shape[static_cast<size_t>(axis)] += in->shape[static_cast<size_t>(axis)];
  }
  return std::vector<TensorSpec>{std::move(out)};
}

// --- Split: `split` from the attribute (before 13) or the optional input 1.
Specs SplitShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  const Node& node = *ctx.node;
  ZG_ASSIGN_OR_RETURN(const int64_t attr, ContractInt(node, "axis"));
  ZG_ASSIGN_OR_RETURN(const int64_t axis,
                      NormalizeAxis(attr, static_cast<int64_t>(x->shape.size())));
  std::optional<std::vector<int64_t>> split;
  if (node.HasAttribute("split")) {
    ZG_ASSIGN_OR_RETURN(split, ContractInts(node, "split"));
  }
  if (ctx.input(1) != nullptr) {
    ZG_ASSIGN_OR_RETURN(split, HostInts(ctx, 1, "split"));
  }
  const bool uneven = node.HasAttribute("num_outputs");
  if (uneven) {
    ZG_ASSIGN_OR_RETURN(const int64_t n, ContractInt(node, "num_outputs"));
    ZG_RETURN_IF_NOT(!split, "both split and num_outputs are given");
    ZG_RETURN_IF_NOT(n == static_cast<int64_t>(node.num_outputs()), "num_outputs is ", n,
                     ", but the node has ", node.num_outputs(), " outputs");
  }
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> parts,
                      ResolveSplit(x->shape[static_cast<size_t>(axis)], std::move(split),
                                   node.num_outputs(), uneven));
  std::vector<TensorSpec> out(parts.size(), *x);
  for (size_t i = 0; i < parts.size(); ++i) out[i].shape[static_cast<size_t>(axis)] = parts[i];
  return out;
}

// --- Slice: attributes before opset 10, host-read inputs since.
Specs SliceShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  const Node& node = *ctx.node;
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.num_inputs() == 1) {
    ZG_ASSIGN_OR_RETURN(starts, ContractInts(node, "starts"));
    ZG_ASSIGN_OR_RETURN(ends, ContractInts(node, "ends"));
    if (node.HasAttribute("axes")) {
      ZG_ASSIGN_OR_RETURN(axes, ContractInts(node, "axes"));
    }
  } else {
    ZG_ASSIGN_OR_RETURN(starts, HostInts(ctx, 1, "starts"));
    ZG_ASSIGN_OR_RETURN(ends, HostInts(ctx, 2, "ends"));
    if (ctx.input(3) != nullptr) {
      ZG_ASSIGN_OR_RETURN(axes, HostInts(ctx, 3, "axes"));
    }
    if (ctx.input(4) != nullptr) {
      ZG_ASSIGN_OR_RETURN(steps, HostInts(ctx, 4, "steps"));
    }
  }
  auto span = [](const std::optional<std::vector<int64_t>>& v) {
    return v ? std::optional<std::span<const int64_t>>(*v) : std::nullopt;
  };
  ZG_ASSIGN_OR_RETURN(SliceRanges ranges,
                      ResolveSlice(x->shape, starts, ends, span(axes), span(steps)));
  return std::vector<TensorSpec>{{x->dtype, std::move(ranges.out)}};
}

// --- Squeeze and Unsqueeze: axes from the attribute (before 13) or the input 1.
StatusOr<std::optional<std::vector<int64_t>>> AxesOf(const ShapeContext& ctx) {
  std::optional<std::vector<int64_t>> axes;
  if (ctx.node->HasAttribute("axes")) {
    ZG_ASSIGN_OR_RETURN(axes, ContractInts(*ctx.node, "axes"));
  }
  if (ctx.input(1) != nullptr) {
    ZG_ASSIGN_OR_RETURN(axes, HostInts(ctx, 1, "axes"));
  }
  return axes;
}

Specs SqueezeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(ctx));
  ZG_ASSIGN_OR_RETURN(Shape out,
                      SqueezedShape(x->shape, axes ? std::optional<std::span<const int64_t>>(*axes)
                                                   : std::nullopt));
  return std::vector<TensorSpec>{{x->dtype, std::move(out)}};
}

Specs UnsqueezeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(ctx));
  ZG_RETURN_IF_NOT(axes.has_value(), "no axes");
  ZG_ASSIGN_OR_RETURN(Shape out, UnsqueezedShape(x->shape, *axes));
  return std::vector<TensorSpec>{{x->dtype, std::move(out)}};
}

// --- Flatten: [product of the dims before axis, product of the rest].
Specs FlattenShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*ctx.node, "axis"));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  if (axis < 0) axis += rank;
  ZG_RETURN_IF_NOT(axis >= 0 && axis <= rank, "axis ", axis, " is out of range for rank ", rank);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->shape[static_cast<size_t>(d)];
  return std::vector<TensorSpec>{
      {x->dtype, {outer, NumElements(x->shape) / std::max<int64_t>(outer, 1)}}};
}

// --- Tile: each dimension times its repeat.
Specs TileShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, HostInts(ctx, 1, "repeats"));
  ZG_RETURN_IF_NOT(repeats.size() == x->shape.size(), "repeats has ", repeats.size(),
                   " values for a rank-", x->shape.size(), " input");
  TensorSpec out = *x;
  for (size_t d = 0; d < repeats.size(); ++d) {
    ZG_RETURN_IF_NOT(repeats[d] >= 0, "repeats ", ShapeToString(repeats), " is negative");
    out.shape[d] *= repeats[d];
  }
  return std::vector<TensorSpec>{std::move(out)};
}

// --- Range: ceil((limit - start) / delta) elements, none when that is negative.
StatusOr<double> HostScalar(const ShapeContext& ctx, size_t i, std::string_view what) {
  const HostValue* value = ctx.value(i);
  ZG_RETURN_IF_NOT(value != nullptr, "the ", what, " input must be known before running");
  ZG_RETURN_IF_NOT(NumElements(value->shape) == 1, "the ", what, " input is not a scalar");
  switch (value->dtype) {
    case kFloat32: {
      float v;
      std::memcpy(&v, value->bytes.data(), sizeof v);
      return static_cast<double>(v);
    }
    case kFloat64: {
      double v;
      std::memcpy(&v, value->bytes.data(), sizeof v);
      return v;
    }
    case kInt16: {
      int16_t v;
      std::memcpy(&v, value->bytes.data(), sizeof v);
      return static_cast<double>(v);
    }
    default: {
      ZG_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(*value, what));
      return static_cast<double>(v[0]);
    }
  }
}

Specs RangeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* start_spec, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const double start, HostScalar(ctx, 0, "start"));
  ZG_ASSIGN_OR_RETURN(const double limit, HostScalar(ctx, 1, "limit"));
  ZG_ASSIGN_OR_RETURN(const double delta, HostScalar(ctx, 2, "delta"));
  ZG_RETURN_IF_NOT(delta != 0, "delta is 0");
  const double count = std::ceil((limit - start) / delta);
  return std::vector<TensorSpec>{
      {start_spec->dtype, {std::max<int64_t>(static_cast<int64_t>(count), 0)}}};
}

// --- ConstantOfShape: the value attribute's dtype (fp32 by default) in the input's shape.
Specs ConstantOfShapeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, HostInts(ctx, 0, "shape"));
  for (int64_t d : shape) ZG_RETURN_IF_NOT(d >= 0, "shape ", ShapeToString(shape), " is negative");
  DataType dtype = kFloat32;
  if (const onnx::AttributeProto* value = ctx.node->FindAttribute("value")) {
    std::optional<DataType> declared = DataTypeFromOnnx(value->t().data_type());
    ZG_RETURN_IF_NOT(declared.has_value(), "attribute 'value' has data type ",
                     value->t().data_type(), ", which is not supported");
    dtype = *declared;
  }
  return std::vector<TensorSpec>{{dtype, Shape(shape.begin(), shape.end())}};
}

// --- Gather: data[..., indices, ...] along axis; the output takes indices' shape there.
Specs GatherShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* data, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* indices, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const int64_t attr, ContractInt(*ctx.node, "axis"));
  ZG_ASSIGN_OR_RETURN(const int64_t axis,
                      NormalizeAxis(attr, static_cast<int64_t>(data->shape.size())));
  Shape out(data->shape.begin(), data->shape.begin() + axis);
  out.insert(out.end(), indices->shape.begin(), indices->shape.end());
  out.insert(out.end(), data->shape.begin() + axis + 1, data->shape.end());
  return std::vector<TensorSpec>{{data->dtype, std::move(out)}};
}

// GatherElements: indices' shape, of data's rank.
Specs GatherElementsShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* data, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* indices, ctx.Required(1));
  ZG_RETURN_IF_NOT(indices->shape.size() == data->shape.size(), "indices ",
                   ShapeToString(indices->shape), " and data ", ShapeToString(data->shape),
                   " differ in rank");
  ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_RETURN_IF_ERROR(NormalizeAxis(axis, static_cast<int64_t>(data->shape.size())).status());
  return std::vector<TensorSpec>{{data->dtype, indices->shape}};
}

// ScatterElements: data's shape; updates has indices' shape.
Specs ScatterElementsShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* data, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* indices, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* updates, ctx.Required(2));
  ZG_RETURN_IF_NOT(indices->shape == updates->shape, "indices ", ShapeToString(indices->shape),
                   " and updates ", ShapeToString(updates->shape), " differ in shape");
  ZG_RETURN_IF_NOT(updates->dtype == data->dtype, "updates and data differ in dtype");
  ZG_RETURN_IF_NOT(indices->shape.size() == data->shape.size(), "indices and data differ in rank");
  ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(*ctx.node, "axis"));
  ZG_RETURN_IF_ERROR(NormalizeAxis(axis, static_cast<int64_t>(data->shape.size())).status());
  return std::vector<TensorSpec>{*data};
}

// ScatterElements' reduction: none, add or mul from opset 16, max and min too from 18.
Status CheckReductionIn(const Node& node, std::span<const std::string_view> known) {
  ZG_ASSIGN_OR_RETURN(const std::string reduction, ContractString(node, "reduction"));
  for (std::string_view name : known) {
    if (reduction == name) return Status::Ok();
  }
  std::string names;
  for (std::string_view name : known) names += StrCat(names.empty() ? "" : ", ", name);
  return InvalidArgumentError(
      StrCat("reduction '", reduction, "' is not one of this version's: ", names));
}
Status CheckReduction16(const Node& node) {
  constexpr std::string_view kKnown[] = {"none", "add", "mul"};
  return CheckReductionIn(node, kKnown);
}
Status CheckReduction18(const Node& node) {
  constexpr std::string_view kKnown[] = {"none", "add", "mul", "max", "min"};
  return CheckReductionIn(node, kKnown);
}

// Trilu: a matrix (or batch of them) in, the same shape out.
Specs TriluShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_RETURN_IF_NOT(x->shape.size() >= 2, "input ", ShapeToString(x->shape), " is not a matrix");
  if (ctx.input(1) != nullptr) ZG_RETURN_IF_ERROR(HostInts(ctx, 1, "k").status());
  return std::vector<TensorSpec>{*x};
}

// GatherGrad: dY's dtype in the shape of Gather's input.
Specs GatherGradShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, HostInts(ctx, 0, "shape"));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* indices, ctx.Required(1));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* dy, ctx.Required(2));
  ZG_ASSIGN_OR_RETURN(const int64_t attr, ContractInt(*ctx.node, "axis"));
  ZG_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(attr, static_cast<int64_t>(shape.size())));
  Shape gathered(shape.begin(), shape.begin() + axis);
  gathered.insert(gathered.end(), indices->shape.begin(), indices->shape.end());
  gathered.insert(gathered.end(), shape.begin() + axis + 1, shape.end());
  ZG_RETURN_IF_NOT(dy->shape == gathered, "dY ", ShapeToString(dy->shape), " is not the shape ",
                   ShapeToString(gathered), " Gather gives");
  return std::vector<TensorSpec>{{dy->dtype, Shape(shape.begin(), shape.end())}};
}

OpFormal Host(std::string_view name, std::string_view type, OpFormal::Arity arity = kSingle) {
  return OpFormal(name, type, arity, /*host=*/true);
}

}  // namespace

Status AddDataMovementContracts(OpContracts& contracts) {
  const TypeConstraint int64{"tensor(int64)", kInt64Type};
  const TypeConstraint tind{"Tind", kIndexTypes};
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Identity",
                                    1,
                                    {{"input", "T"}},
                                    {{"output", "T"}},
                                    {},
                                    {{"T", kAllTypes}},
                                    SameAsFirstInput}));
  ZG_RETURN_IF_ERROR(contracts.Add(Reshape(5)));
  ZG_RETURN_IF_ERROR(contracts.Add(Reshape(14)));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Transpose",
                                    1,
                                    {{"data", "T"}},
                                    {{"transposed", "T"}},
                                    {{"perm", AttributeType::kInts, false, {}}},
                                    {{"T", kAllTypes}},
                                    TransposeShape}));
  OpContract cast{"",
                  "Cast",
                  6,
                  {{"input", "T1"}},
                  {{"output", "T2"}},
                  {{"to", AttributeType::kInt, /*required=*/true, {}}},
                  {{"T1", kAllTypes}, {"T2", kAllTypes}},
                  CastShape};
  cast.keeps_input_shape = FirstInputKeepsShape;
  ZG_RETURN_IF_ERROR(contracts.Add(std::move(cast)));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "CastLike",
                                    15,
                                    {{"input", "T1"}, {"target_type", "T2"}},
                                    {{"output", "T2"}},
                                    {},
                                    {{"T1", kAllTypes}, {"T2", kAllTypes}},
                                    CastLikeShape}));
  for (int since : {1, 15}) {
    OpContract shape{"",
                     "Shape",
                     since,
                     {{"data", "T"}},
                     {{"shape", "tensor(int64)"}},
                     {},
                     {{"T", kAllTypes}, int64},
                     ShapeShape};
    if (since == 15) {
      shape.attributes = {{"start", AttributeType::kInt, false, int64_t{0}},
                          {"end", AttributeType::kInt, false, {}}};
    }
    shape.values_from_shapes = ShapeValues;
    ZG_RETURN_IF_ERROR(contracts.Add(std::move(shape)));
  }
  OpContract size{"",
                  "Size",
                  1,
                  {{"data", "T"}},
                  {{"size", "tensor(int64)"}},
                  {},
                  {{"T", kAllTypes}, int64},
                  SizeShape};
  size.values_from_shapes = SizeValues;
  ZG_RETURN_IF_ERROR(contracts.Add(std::move(size)));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Expand",
                                    8,
                                    {{"input", "T"}, Host("shape", "tensor(int64)")},
                                    {{"output", "T"}},
                                    {},
                                    {{"T", kAllTypes}, int64},
                                    ExpandShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Concat",
                                    4,
                                    {{"inputs", "T", kVariadic}},
                                    {{"concat_result", "T"}},
                                    {{"axis", AttributeType::kInt, /*required=*/true, {}}},
                                    {{"T", kAllTypes}},
                                    ConcatShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Split",
                                    2,
                                    {{"input", "T"}},
                                    {{"outputs", "T", kVariadic}},
                                    {{"axis", AttributeType::kInt, false, int64_t{0}},
                                     {"split", AttributeType::kInts, false, {}}},
                                    {{"T", kAllTypesBefore13}},
                                    SplitShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Split",
                                    13,
                                    {{"input", "T"}, Host("split", "tensor(int64)", kOptional)},
                                    {{"outputs", "T", kVariadic}},
                                    {{"axis", AttributeType::kInt, false, int64_t{0}}},
                                    {{"T", kAllTypes}, int64},
                                    SplitShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Split",
                                    18,
                                    {{"input", "T"}, Host("split", "tensor(int64)", kOptional)},
                                    {{"outputs", "T", kVariadic}},
                                    {{"axis", AttributeType::kInt, false, int64_t{0}},
                                     {"num_outputs", AttributeType::kInt, false, {}}},
                                    {{"T", kAllTypes}, int64},
                                    SplitShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Slice",
                                    1,
                                    {{"data", "T"}},
                                    {{"output", "T"}},
                                    {{"axes", AttributeType::kInts, false, {}},
                                     {"ends", AttributeType::kInts, true, {}},
                                     {"starts", AttributeType::kInts, true, {}}},
                                    {{"T", kAllTypesBefore13}},
                                    SliceShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Slice",
                                    10,
                                    {{"data", "T"},
                                     Host("starts", "Tind"),
                                     Host("ends", "Tind"),
                                     Host("axes", "Tind", kOptional),
                                     Host("steps", "Tind", kOptional)},
                                    {{"output", "T"}},
                                    {},
                                    {{"T", kAllTypes}, tind},
                                    SliceShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Squeeze",
                                    1,
                                    {{"data", "T"}},
                                    {{"squeezed", "T"}},
                                    {{"axes", AttributeType::kInts, false, {}}},
                                    {{"T", kAllTypesBefore13}},
                                    SqueezeShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Squeeze",
                                    13,
                                    {{"data", "T"}, Host("axes", "tensor(int64)", kOptional)},
                                    {{"squeezed", "T"}},
                                    {},
                                    {{"T", kAllTypes}, int64},
                                    SqueezeShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Unsqueeze",
                                    1,
                                    {{"data", "T"}},
                                    {{"expanded", "T"}},
                                    {{"axes", AttributeType::kInts, true, {}}},
                                    {{"T", kAllTypesBefore13}},
                                    UnsqueezeShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Unsqueeze",
                                    13,
                                    {{"data", "T"}, Host("axes", "tensor(int64)")},
                                    {{"expanded", "T"}},
                                    {},
                                    {{"T", kAllTypes}, int64},
                                    UnsqueezeShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Flatten",
                                    1,
                                    {{"input", "T"}},
                                    {{"output", "T"}},
                                    {{"axis", AttributeType::kInt, false, int64_t{1}}},
                                    {{"T", kAllTypes}},
                                    FlattenShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Tile",
                                    6,
                                    {{"input", "T"}, Host("repeats", "T1")},
                                    {{"output", "T"}},
                                    {},
                                    {{"T", kAllTypes}, {"T1", kInt64Type}},
                                    TileShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Range",
                                    11,
                                    {Host("start", "T"), Host("limit", "T"), Host("delta", "T")},
                                    {{"output", "T"}},
                                    {},
                                    {{"T", kRangeTypes}},
                                    RangeShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "ConstantOfShape",
                                    9,
                                    {Host("input", "T1")},
                                    {{"output", "T2"}},
                                    {{"value", AttributeType::kTensor, false, {}}},
                                    {{"T1", kInt64Type}, {"T2", kAllTypesBefore13}},
                                    ConstantOfShapeShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Gather",
                                    1,
                                    {{"data", "T"}, {"indices", "Tind"}},
                                    {{"output", "T"}},
                                    {{"axis", AttributeType::kInt, false, int64_t{0}}},
                                    {{"T", kAllTypes}, tind},
                                    GatherShape}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "GatherElements",
                                    11,
                                    {{"data", "T"}, {"indices", "Tind"}},
                                    {{"output", "T"}},
                                    {{"axis", AttributeType::kInt, false, int64_t{0}}},
                                    {{"T", kAllTypes}, tind},
                                    GatherElementsShape}));
  // Scatter (opset 9, deprecated by 11) is ScatterElements without reductions.
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Scatter",
                                    9,
                                    {{"data", "T"}, {"indices", "Tind"}, {"updates", "T"}},
                                    {{"output", "T"}},
                                    {{"axis", AttributeType::kInt, false, int64_t{0}}},
                                    {{"T", kAllTypesBefore13}, tind},
                                    ScatterElementsShape}));
  for (int since : {11, 16, 18}) {
    OpContract scatter{"",
                       "ScatterElements",
                       since,
                       {{"data", "T"}, {"indices", "Tind"}, {"updates", "T"}},
                       {{"output", "T"}},
                       {{"axis", AttributeType::kInt, false, int64_t{0}}},
                       {{"T", kAllTypes}, tind},
                       ScatterElementsShape};
    if (since >= 16) {
      scatter.attributes.push_back(
          {"reduction", AttributeType::kString, false, std::string_view("none")});
      scatter.check = since >= 18 ? CheckReduction18 : CheckReduction16;
    }
    ZG_RETURN_IF_ERROR(contracts.Add(std::move(scatter)));
  }
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Trilu",
                                    14,
                                    {{"input", "T"}, Host("k", "tensor(int64)", kOptional)},
                                    {{"output", "T"}},
                                    {{"upper", AttributeType::kInt, false, int64_t{1}}},
                                    {{"T", kAllTypes}, int64},
                                    TriluShape}));
  return contracts.Add({"com.microsoft",
                        "GatherGrad",
                        1,
                        {Host("shape", "I"), {"indices", "Tind"}, {"dY", "T"}},
                        {{"dX", "T"}},
                        {{"axis", AttributeType::kInt, false, int64_t{0}}},
                        {{"I", kInt64Type}, {"T", kFloatTypes}, tind},
                        GatherGradShape});
}

}  // namespace zerograph::contracts
