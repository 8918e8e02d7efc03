// Contracts of the standard ONNX ops we run, as ONNX's schemas define them (onnx/defs/*/defs.cc):
// formals, attributes with defaults and the newest type constraints. A contract starts at the
// first version whose semantics it describes; later versions that only added dtypes share it.

#include <onnx/onnx_pb.h>

#include <limits>
#include <string>

#include "ir/contracts/broadcast_shape_functions.h"
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
    {"Relu", 6, kSignedTypes},   {"Neg", 6, kSignedTypes},       {"Sqrt", 6, kFloatTypes},
    {"Sin", 7, kIeeeFloatTypes}, {"Abs", 6, kNumericTypes},      {"Exp", 6, kFloatTypes},
    {"Log", 6, kFloatTypes},     {"Reciprocal", 6, kFloatTypes}, {"Erf", 9, kFloatTypes},
    {"Tanh", 6, kFloatTypes},    {"Sigmoid", 6, kFloatTypes},    {"Floor", 6, kFloatTypes},
    {"Ceil", 6, kFloatTypes},    {"Sign", 9, kNumericTypes},     {"Not", 1, kBoolType},
};
constexpr ElementwiseOp kBinaryOps[] = {
    {"Add", 7, kNumericTypes},
    {"Sub", 7, kNumericTypes},
    {"Mul", 7, kNumericTypes},
    {"Div", 7, kNumericTypes},
};
// Bool outputs; And and Or take bools.
constexpr ElementwiseOp kComparisonOps[] = {
    {"Greater", 7, kNumericTypes},
    {"Less", 7, kNumericTypes},
    {"LessOrEqual", 12, kNumericTypes},
    {"GreaterOrEqual", 12, kNumericTypes},
    {"Equal", 7, kEqualityTypes},
    {"And", 7, kBoolType},
    {"Or", 7, kBoolType},
};
// One or more inputs broadcast together (Max-6 and Sum-6 did not broadcast: a subset).
constexpr ElementwiseOp kVariadicOps[] = {
    {"Max", 6, kNumericTypes},
    {"Min", 6, kNumericTypes},
    {"Sum", 6, kFloatTypes},
    {"Mean", 6, kFloatTypes},
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

OpContract Variadic(const ElementwiseOp& op) {
  return {"", op.name,           op.since_version, {{"data_0", "T", kVariadic}}, {{"result", "T"}},
          {}, {{"T", op.types}}, BroadcastVariadic};
}

Status CheckGelu(const Node& node) {
  const StatusOr<std::string> approximate = ContractString(node, "approximate");
  if (!approximate.ok()) return approximate.status();
  ZG_RETURN_IF_NOT(*approximate == "none" || *approximate == "tanh", "attribute 'approximate' is '",
                   *approximate, "', not 'none' or 'tanh'");
  return Status::Ok();
}

// The element-wise ops with attributes, several inputs or mixed dtypes.
Status AddOtherElementwiseContracts(OpContracts& contracts) {
  for (const ElementwiseOp& op : kVariadicOps) ZG_RETURN_IF_ERROR(contracts.Add(Variadic(op)));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Where",
                                    9,
                                    {{"condition", "B"}, {"X", "T"}, {"Y", "T"}},
                                    {{"output", "T"}},
                                    {},
                                    {{"B", kBoolType}, {"T", kAllTypes}},
                                    WhereShape}));
  // Pow-7 took one dtype for both; Pow-12 lets the exponent differ.
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Pow",
                                    7,
                                    {{"X", "T"}, {"Y", "T1"}},
                                    {{"Z", "T"}},
                                    {},
                                    {{"T", kPowBaseTypes}, {"T1", kNumericTypes}},
                                    BroadcastLikeFirst}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Mod",
                                    10,
                                    {{"A", "T"}, {"B", "T"}},
                                    {{"C", "T"}},
                                    {{"fmod", AttributeType::kInt, false, int64_t{0}}},
                                    {{"T", kNumericTypes}},
                                    BroadcastBinary}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "LeakyRelu",
                                    6,
                                    {{"X", "T"}},
                                    {{"Y", "T"}},
                                    {{"alpha", AttributeType::kFloat, false, 0.01f}},
                                    {{"T", kFloatTypes}},
                                    SameAsFirstInput}));
  ZG_RETURN_IF_ERROR(contracts.Add({"",
                                    "Gelu",
                                    20,
                                    {{"X", "T"}},
                                    {{"Y", "T"}},
                                    {{"approximate", AttributeType::kString, false, "none"}},
                                    {{"T", kFloatTypes}},
                                    SameAsFirstInput,
                                    {},
                                    CheckGelu}));
  // Clip-6 bounds by attribute, Clip-11 by optional scalar inputs.
  ZG_RETURN_IF_ERROR(
      contracts.Add({"",
                     "Clip",
                     6,
                     {{"input", "T"}},
                     {{"output", "T"}},
                     {{"min", AttributeType::kFloat, false, std::numeric_limits<float>::lowest()},
                      {"max", AttributeType::kFloat, false, std::numeric_limits<float>::max()}},
                     {{"T", kIeeeFloatTypes}},
                     SameAsFirstInput}));
  return contracts.Add({"",
                        "Clip",
                        11,
                        {{"input", "T"}, {"min", "T", kOptional}, {"max", "T", kOptional}},
                        {{"output", "T"}},
                        {},
                        {{"T", kNumericTypes}},
                        SameAsFirstInput});
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
  ZG_RETURN_IF_ERROR(AddOtherElementwiseContracts(contracts));
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
