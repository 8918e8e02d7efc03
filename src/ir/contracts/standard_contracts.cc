// Contracts of the standard ONNX ops we run, as ONNX's schemas define them (onnx/defs/*/defs.cc):
// formals, attributes with defaults and the newest type constraints. A contract starts at the
// first version whose semantics it describes; later versions that only added dtypes share it.

#include <onnx/onnx_pb.h>

#include "ir/contracts/contracts.h"
#include "ir/contracts/shape_functions.h"

namespace zerograph::contracts {
namespace {

// --- Element-wise ops: a new one is a line here, plus its kernel (src/runtime/kernels/).
struct ElementwiseOp {
  std::string_view name;
  int since_version;
  std::span<const DataType> types;
};
constexpr ElementwiseOp kUnaryOps[] = {
    {"Relu", 6, kSignedTypes},
    {"Neg", 6, kSignedTypes},
    {"Sqrt", 6, kFloatTypes},
    {"Sin", 7, kIeeeFloatTypes},
};
constexpr ElementwiseOp kBinaryOps[] = {
    {"Add", 7, kNumericTypes},
    {"Sub", 7, kNumericTypes},
    {"Mul", 7, kNumericTypes},
    {"Div", 7, kNumericTypes},
};
constexpr ElementwiseOp kComparisonOps[] = {
    {"Greater", 7, kNumericTypes},
};

OpContract Unary(const ElementwiseOp& op) {
  return {"",           op.name, op.since_version,  {{"X", "T"}},
          {{"Y", "T"}}, {},      {{"T", op.types}}, SameAsFirstInput};
}
OpContract Binary(const ElementwiseOp& op) {
  return {"",           op.name, op.since_version,  {{"A", "T"}, {"B", "T"}},
          {{"C", "T"}}, {},      {{"T", op.types}}, BroadcastBinary};
}
OpContract Comparison(const ElementwiseOp& op) {
  return {"",
          op.name,
          op.since_version,
          {{"A", "T"}, {"B", "T"}},
          {{"C", "T1"}},
          {},
          {{"T", op.types}, {"T1", kBoolType}},
          BroadcastComparison};
}

// --- Matrix products.

// numpy matmul: 1-D operands promoted, batch dimensions broadcast.
StatusOr<std::vector<TensorSpec>> MatMulShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(1));
  ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
  ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(a->shape, b->shape));
  return std::vector<TensorSpec>{{a->dtype, std::move(s.out)}};
}

// Y = alpha·A'·B' + beta·C, C broadcast to [M, N].
StatusOr<std::vector<TensorSpec>> GemmShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* a, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(const TensorSpec* b, ctx.Required(1));
  ZG_RETURN_IF_NOT(a->shape.size() == 2 && b->shape.size() == 2, "A and B must be 2-D, got ",
                   ShapeToString(a->shape), " and ", ShapeToString(b->shape));
  ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
  ZG_ASSIGN_OR_RETURN(int64_t trans_a, ContractInt(*ctx.node, "transA"));
  ZG_ASSIGN_OR_RETURN(int64_t trans_b, ContractInt(*ctx.node, "transB"));
  const int64_t m = trans_a ? a->shape[1] : a->shape[0];
  const int64_t k = trans_a ? a->shape[0] : a->shape[1];
  const int64_t kb = trans_b ? b->shape[1] : b->shape[0];
  const int64_t n = trans_b ? b->shape[0] : b->shape[1];
  ZG_RETURN_IF_NOT(k == kb, "inner dimensions differ: A' is [", m, ",", k, "], B' is [", kb, ",", n,
                   "]");
  const Shape out = {m, n};
  if (const TensorSpec* c = ctx.input(2)) {
    ZG_RETURN_IF_NOT(c->dtype == a->dtype, "C has another dtype");
    StatusOr<Shape> broadcast = BroadcastShapes(c->shape, out);
    ZG_RETURN_IF_NOT(broadcast.ok() && *broadcast == out, "C ", ShapeToString(c->shape),
                     " does not broadcast to [", m, ",", n, "]");
  }
  return std::vector<TensorSpec>{{a->dtype, out}};
}

// C is optional from opset 11; bfloat16 came with 13, which shares 11's contract.
OpContract Gemm(int since_version) {
  const bool c_optional = since_version >= 11;
  return {"",
          "Gemm",
          since_version,
          {{"A", "T"}, {"B", "T"}, {"C", "T", c_optional ? kOptional : kSingle}},
          {{"Y", "T"}},
          {{"alpha", AttributeType::kFloat, false, 1.0f},
           {"beta", AttributeType::kFloat, false, 1.0f},
           {"transA", AttributeType::kInt, false, int64_t{0}},
           {"transB", AttributeType::kInt, false, int64_t{0}}},
          {{"T", c_optional ? std::span<const DataType>(kMatMulTypes)
                            : std::span<const DataType>(kReduceTypesBefore13)}},
          GemmShape};
}

// --- Data movement.

// Reshape per ONNX: 0 copies a dimension unless `allowzero`, -1 is inferred.
StatusOr<std::vector<TensorSpec>> ReshapeShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  const HostValue* value = ctx.value(1);
  ZG_RETURN_IF_NOT(value != nullptr, "the shape input must be a constant");
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadInts(*value, "shape"));
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
  ZG_RETURN_IF_NOT(NumElements(out) == total, "cannot reshape ", ShapeToString(input), " to ",
                   ShapeToString(requested));
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

StatusOr<std::vector<TensorSpec>> TransposeShape(const ShapeContext& ctx) {
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

StatusOr<std::vector<TensorSpec>> CastShape(const ShapeContext& ctx) {
  ZG_ASSIGN_OR_RETURN(const TensorSpec* x, ctx.Required(0));
  ZG_ASSIGN_OR_RETURN(int64_t to, ContractInt(*ctx.node, "to"));
  std::optional<DataType> target = DataTypeFromOnnx(static_cast<int32_t>(to));
  ZG_RETURN_IF_NOT(target.has_value(), "attribute 'to' = ", to, " is not a data type");
  return std::vector<TensorSpec>{{*target, x->shape}};
}

// The value's dtype and shape, from whichever `value*` attribute the node has.
StatusOr<std::vector<TensorSpec>> ConstantShape(const ShapeContext& ctx) {
  const Node& node = *ctx.node;
  if (const onnx::AttributeProto* value = node.FindAttribute("value")) {
    ZG_RETURN_IF_NOT(value->has_t(), "attribute 'value' holds no tensor");
    std::optional<DataType> dtype = DataTypeFromOnnx(value->t().data_type());
    ZG_RETURN_IF_NOT(dtype.has_value(), "attribute 'value' has data type ", value->t().data_type(),
                     ", which is not supported");
    const auto& dims = value->t().dims();
    return std::vector<TensorSpec>{TensorSpec{*dtype, Shape(dims.begin(), dims.end())}};
  }
  if (node.GetFloat("value_float")) return std::vector<TensorSpec>{{DataType::kFloat32, {}}};
  if (node.GetInt("value_int")) return std::vector<TensorSpec>{{DataType::kInt64, {}}};
  if (std::optional<std::span<const float>> floats = node.GetFloats("value_floats")) {
    return std::vector<TensorSpec>{{DataType::kFloat32, {static_cast<int64_t>(floats->size())}}};
  }
  if (std::optional<std::span<const int64_t>> ints = node.GetInts("value_ints")) {
    return std::vector<TensorSpec>{{DataType::kInt64, {static_cast<int64_t>(ints->size())}}};
  }
  return UnimplementedError(
      "Constant needs one of value, value_float(s), value_int(s) (strings and sparse tensors are "
      "not supported)");
}

}  // namespace

Status AddStandardContracts(OpContracts& contracts) {
  for (const ElementwiseOp& op : kUnaryOps) ZG_RETURN_IF_ERROR(contracts.Add(Unary(op)));
  for (const ElementwiseOp& op : kBinaryOps) ZG_RETURN_IF_ERROR(contracts.Add(Binary(op)));
  for (const ElementwiseOp& op : kComparisonOps) {
    ZG_RETURN_IF_ERROR(contracts.Add(Comparison(op)));
  }
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "MatMul",
                                    1,
                                    {{"A", "T"}, {"B", "T"}},
                                    {{"Y", "T"}},
                                    {},
                                    {{"T", kMatMulTypes}},
                                    MatMulShape}));
  ZG_RETURN_IF_ERROR(contracts.Add(Gemm(7)));
  ZG_RETURN_IF_ERROR(contracts.Add(Gemm(11)));
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
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Cast",
                                    6,
                                    {{"input", "T1"}},
                                    {{"output", "T2"}},
                                    {{"to", AttributeType::kInt, /*required=*/true, {}}},
                                    {{"T1", kAllTypes}, {"T2", kAllTypes}},
                                    CastShape}));
  // Exactly one of the value attributes; ConstantShape says which ones it does not support.
  return contracts.Add({"",
                        "Constant",
                        1,
                        {},
                        {{"output", "T"}},
                        {{"sparse_value", AttributeType::kSparseTensor, false, {}},
                         {"value", AttributeType::kTensor, false, {}},
                         {"value_float", AttributeType::kFloat, false, {}},
                         {"value_floats", AttributeType::kFloats, false, {}},
                         {"value_int", AttributeType::kInt, false, {}},
                         {"value_ints", AttributeType::kInts, false, {}},
                         {"value_string", AttributeType::kString, false, {}},
                         {"value_strings", AttributeType::kStrings, false, {}}},
                        {{"T", kAllTypes}},
                        ConstantShape});
}

}  // namespace zerograph::contracts
