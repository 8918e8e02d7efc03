#ifndef ZEROGRAPH_IR_OP_CONTRACT_H_
#define ZEROGRAPH_IR_OP_CONTRACT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/tensor_spec.h"

namespace zerograph {

class Graph;

// A tensor known before anything runs (an initializer, a Constant's output), as host bytes: what
// shape functions read from the inputs an op declares host-read (Reshape's shape, Reduce's axes).
struct HostValue {
  DataType dtype = DataType::kUndefined;
  std::span<const int64_t> shape;
  std::span<const std::byte> bytes;
};

// The values of a 1-D (or scalar) integer HostValue, widened to int64.
StatusOr<std::vector<int64_t>> ReadInts(const HostValue& value, std::string_view what);

// What a shape function sees of one node.
struct ShapeContext {
  const Node* node = nullptr;
  // One per node input; null for an omitted optional input.
  std::span<const TensorSpec* const> inputs;
  // For the host-read inputs: their values when known before running; null or short otherwise.
  std::span<const HostValue* const> values;
  // The ranks the graph runs on (LocalShard's shard is a 1/nranks of its input).
  int nranks = 1;

  size_t num_inputs() const { return inputs.size(); }
  const TensorSpec* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  const HostValue* value(size_t i) const { return i < values.size() ? values[i] : nullptr; }
  // Input i, which must be present.
  StatusOr<const TensorSpec*> Required(size_t i) const;
};

// An op's shape and type function: one TensorSpec per node output, or the reason the node's
// inputs or attributes are invalid (InvalidArgument; the caller adds the node's name).
using ShapeFunction = StatusOr<std::vector<TensorSpec>> (*)(const ShapeContext&);

// One input or output of an op.
struct OpFormal {
  // kVariadic takes one or more values, kVariadicOrNone zero or more; either comes last.
  enum class Arity { kSingle, kOptional, kVariadic, kVariadicOrNone };

  OpFormal(std::string_view formal_name, std::string_view type_var = "",
           Arity formal_arity = Arity::kSingle, bool host_read = false)
      : name(formal_name), type(type_var), arity(formal_arity), host(host_read) {}

  std::string_view name;
  // The type variable ("T"), naming one of the contract's TypeConstraints; "" for any dtype.
  std::string_view type;
  Arity arity = Arity::kSingle;
  // Read on the host by shape inference: the executor keeps it in host memory and shape functions
  // get its value (ShapeContext::values) when it is known before running.
  bool host = false;
};

// The dtypes a type variable may take.
struct TypeConstraint {
  std::string_view name;
  std::span<const DataType> allowed;
};

// An attribute's default: none (absent means absent), or a value of the attribute's type.
using AttributeDefault =
    std::variant<std::monostate, int64_t, float, std::string_view, std::vector<int64_t>>;

struct OpAttribute {
  OpAttribute(std::string_view attribute_name, AttributeType attribute_type, bool is_required,
              AttributeDefault default_to)
      : name(attribute_name),
        type(attribute_type),
        required(is_required),
        default_value(std::move(default_to)) {}

  std::string_view name;
  AttributeType type = AttributeType::kUndefined;
  // Absent and required: Verify refuses the node. Absent and not required: `default_value`.
  bool required = false;
  AttributeDefault default_value;
};

// The per-parameter input layout of a multi-tensor optimizer (ONNX's training ops and ours):
//   inputs  = scalars..., X1..Xn, G1..Gn, S1_1..S1_n, ..., Sk_1..Sk_n
//   outputs = X1'..Xn', S1_1'..S1_n', ..., Sk_1'..Sk_n'
// Each update is elementwise, so applying it to a shard of every tensor is exact.
struct OptimizerLayout {
  // Leading inputs shared by all parameters (learning rate, step).
  int num_scalars = 0;
  // State tensors per parameter (AdamW: 2, Momentum: 1, SGD: 0).
  int num_states = 0;
  // Whether one more input may follow the groups: org.zerograph's fp32[3] `control`
  // (GradientControl's output), which scales the gradients and may skip the update. It is no
  // parameter's: whoever splits the node per parameter keeps it whole. ONNX's optimizers take none.
  bool optional_control = false;

  // The parameters of a node with these counts (n, from the outputs), or nullopt when they do not
  // split into the scalars, per-parameter groups and the optional control.
  std::optional<size_t> NumParams(size_t num_inputs, size_t num_outputs) const;
  // Whether a node with these counts has the control input (its last input).
  bool HasControl(size_t num_inputs, size_t num_outputs) const;
};

// How an op's outputs lie in memory where that is part of the op's meaning, so that the executor
// can place them without copying. Each member is optional.
struct OpMemory {
  // Where each input lives inside output 0 (CoalesceTensors: offsets[i]): its producer may write
  // it there directly. Empty when the node does not say.
  std::vector<int64_t> (*input_offsets_in_output)(const Node&) = nullptr;
  // Output 0 is this rank's 1/nranks slice of input 0 (LocalShard): an initializer that only such
  // nodes read is held as that slice alone.
  bool selects_rank_shard = false;
  // Output 0 holds every rank's input 0 in rank order (AllGather): it may live where those shards
  // already are.
  bool gathers_rank_shards = false;
};

// Whether a node's output 0 has the shape of its input `input` whatever that shape is, decided from
// the node alone (its attributes and constant inputs, not the shapes of values computed at run
// time): true, false, or nullopt where only the shapes can tell.
using KeepsInputShape = std::optional<bool> (*)(const Node& node, size_t input);

// What a node must satisfy beyond its formals and attribute types (attribute lengths that follow
// the input count, enumerated strings); InvalidArgument says what is wrong.
using NodeCheck = Status (*)(const Node&);

// Everything the rest of zerograph knows about one version of an op, in one place: Verify checks
// nodes against it, shape inference runs its shape function, role inference and the sharding
// pass read its optimizer layout, and the kernel registries check their kernels against it.
struct OpContract {
  OpContract(std::string_view op_domain, std::string_view op_name, int since,
             std::vector<OpFormal> formal_inputs, std::vector<OpFormal> formal_outputs,
             std::vector<OpAttribute> op_attributes, std::vector<TypeConstraint> constraints,
             ShapeFunction shape_function, std::optional<OptimizerLayout> optimizer_layout = {},
             NodeCheck node_check = nullptr)
      : domain(op_domain),
        name(op_name),
        since_version(since),
        inputs(std::move(formal_inputs)),
        outputs(std::move(formal_outputs)),
        attributes(std::move(op_attributes)),
        type_constraints(std::move(constraints)),
        infer(shape_function),
        optimizer(optimizer_layout),
        check(node_check) {}

  // "" for ONNX's default domain, "org.zerograph", "ai.onnx.preview.training", ...
  std::string_view domain;
  std::string_view name;
  // The opset version this contract starts at; it holds until the op's next contract.
  int since_version = 1;
  // A variadic formal comes last.
  std::vector<OpFormal> inputs;
  std::vector<OpFormal> outputs;
  std::vector<OpAttribute> attributes;
  std::vector<TypeConstraint> type_constraints;
  ShapeFunction infer = nullptr;
  std::optional<OptimizerLayout> optimizer;
  NodeCheck check = nullptr;
  OpMemory memory;
  // For ops whose one int64 output follows from the inputs' shapes alone (Shape, Size): its
  // values. The executor computes them while planning, so the shape functions of their readers
  // (Reshape's shape) know them; the kernels call it too.
  StatusOr<std::vector<int64_t>> (*values_from_shapes)(const ShapeContext&) = nullptr;
  // Lets role inference tell a gradient's post-processing (which keeps its shape) from backward
  // ops that change it without inferring every shape. Null: only the shapes can tell. Set by the
  // contract, or by OpContracts::Add for the shared shape functions (KeepsInputShapeRuleOf).
  KeepsInputShape keeps_input_shape = nullptr;

  // The type constraint named `type`, or null.
  const TypeConstraint* FindConstraint(std::string_view type) const;
  // The attribute named `name`, or null.
  const OpAttribute* FindAttribute(std::string_view name) const;
  // The formal that node input `index` binds to, or null past the last one.
  const OpFormal* InputFormal(size_t index) const;
  // Whether node input `index` is host-read.
  bool IsHostInput(size_t index) const;
  // "Add-14", "org.zerograph::AdamW-1".
  std::string ToString() const;
};

// Every contract, by (domain, name), each op's versions in order. Built once from explicit lists
// (src/ir/contracts/), never by static initializers.
class OpContracts {
 public:
  // The process's contracts.
  static const OpContracts& Get();

  // The newest contract of the op not newer than `opset_version` (nullopt: the newest), or null.
  const OpContract* Find(std::string_view domain, std::string_view name,
                         std::optional<int64_t> opset_version = std::nullopt) const;
  // Every contract, sorted by domain, name and version.
  std::vector<const OpContract*> All() const;
  // Every version of the op, or null: what a Node keeps of its op (Node::op_versions()).
  const OpVersions* FindOp(std::string_view domain, std::string_view name) const;
  // The newest of `versions` not newer than `opset_version` (nullopt: the newest), or null.
  static const OpContract* PickVersion(const OpVersions& versions,
                                       std::optional<int64_t> opset_version);

  // The ops with an optimizer layout, for a scan that asks of every node whether it is one.
  struct Optimizer {
    std::string_view domain;
    std::string_view name;
    OptimizerLayout layout;
  };
  std::span<const Optimizer> optimizers() const { return optimizers_; }

  // Adds a contract; fails when (domain, name, since_version) is taken or the contract is
  // malformed (a type variable without a constraint, a variadic formal that is not last).
  Status Add(OpContract contract);

 private:
  // By domain, then name (looked up without allocating: Verify asks once per node), each op's
  // versions in order.
  using ByName = std::map<std::string, OpVersions, std::less<>>;
  std::map<std::string, ByName, std::less<>> by_domain_;
  std::vector<Optimizer> optimizers_;
};

// The contract of `node`'s op at `opset_version` (nullopt: the newest), or null.
const OpContract* FindContract(const Node& node, std::optional<int64_t> opset_version);

// The contracts of one graph's nodes at the graph's opsets, remembered per op: a walk over every
// node asks this, and a graph has few distinct ops (Verify, InferShapes, the executor's plan).
class GraphContracts {
 public:
  explicit GraphContracts(const Graph& graph) : graph_(graph) {}

  // The node's contract at its domain's opset version in the graph, or null.
  const OpContract* Find(const Node& node);

 private:
  const Graph& graph_;
  std::vector<std::pair<const OpVersions*, const OpContract*>> known_;
};

// "ai.onnx" and "" both name ONNX's default domain.
std::string_view NormalizeDomain(std::string_view domain);

// Which attributes CheckNodeAgainstContract reads: the required ones, or every declared one.
// Reading an attribute touches the node's ONNX message, which a pass over a large graph otherwise
// never loads; an optional attribute of the wrong type is refused where it is read (ContractInt).
enum class AttributeCheck { kRequired, kAll };

// Checks `node` against `contract`: input and output counts, omitted inputs only where optional,
// the optimizer layout's groups, the contract's check, and `attributes`: present and of their
// declared type. Errors name the node.
Status CheckNodeAgainstContract(const Node& node, const OpContract& contract,
                                AttributeCheck attributes = AttributeCheck::kAll);

// Attribute readers with the contract's defaults: an absent attribute takes the default of the
// node's op contract, or is an error when it has none; another type is an error naming the
// attribute.
StatusOr<int64_t> ContractInt(const Node& node, std::string_view name);
StatusOr<float> ContractFloat(const Node& node, std::string_view name);
StatusOr<std::string> ContractString(const Node& node, std::string_view name);
StatusOr<std::vector<int64_t>> ContractInts(const Node& node, std::string_view name);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_OP_CONTRACT_H_
