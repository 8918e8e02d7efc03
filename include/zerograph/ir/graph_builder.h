#ifndef ZEROGRAPH_IR_GRAPH_BUILDER_H_
#define ZEROGRAPH_IR_GRAPH_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "zerograph/ir/dtype.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/tensor_type.h"

namespace zerograph {

// An operator: its domain ("" is ONNX's default) and type. A bare name is a default-domain op, so
// `"Relu"` and `{kZerographDomain, "AdamW"}` both read naturally at call sites.
struct OpName {
  OpName(const char* type) : op_type(type) {}       // NOLINT: implicit by design
  OpName(std::string_view type) : op_type(type) {}  // NOLINT: implicit by design
  OpName(std::string_view op_domain, std::string_view type) : domain(op_domain), op_type(type) {}

  std::string_view domain;
  std::string_view op_type;
};

// One node attribute, of a kind Node has a typed setter for: `Attr("transA", 1)`,
// `Attr("epsilon", 1e-8f)`, `Attr("mode", "standard")`, `Attr("perm", std::vector<int64_t>{1, 0})`.
struct Attr {
  using Data = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                            std::vector<std::string>>;
  Attr(std::string attr_name, int v) : name(std::move(attr_name)), value(int64_t{v}) {}
  Attr(std::string attr_name, int64_t v) : name(std::move(attr_name)), value(v) {}
  Attr(std::string attr_name, float v) : name(std::move(attr_name)), value(v) {}
  // ONNX attributes are float32; a double literal is rounded once, here.
  Attr(std::string attr_name, double v)
      : name(std::move(attr_name)), value(static_cast<float>(v)) {}
  Attr(std::string attr_name, const char* v) : name(std::move(attr_name)), value(std::string(v)) {}
  Attr(std::string attr_name, std::string v) : name(std::move(attr_name)), value(std::move(v)) {}
  Attr(std::string attr_name, std::vector<int64_t> v)
      : name(std::move(attr_name)), value(std::move(v)) {}
  Attr(std::string attr_name, std::vector<float> v)
      : name(std::move(attr_name)), value(std::move(v)) {}
  Attr(std::string attr_name, std::vector<std::string> v)
      : name(std::move(attr_name)), value(std::move(v)) {}

  std::string name;
  Data value;
};

// Writes training graphs in C++ with little ceremony, for tests and the model generator. Nodes get
// the current role (so a forward section, a backward section and an optimizer section read as
// three blocks), unique names, and the opset import of their domain. A requested value name that
// is taken is made unique ("h", "h_1"): use the returned value's name.
//
//   GraphBuilder b(graph);
//   Value* x = b.Input("x", DataType::kFloat32, {4, 16});
//   Value* w = b.Initializer("w", {16, 8}, weights);
//   b.SetRole(OpRole::kForward);
//   Value* y = b.SetType(b.Op("MatMul", {x, w}, "y"), DataType::kFloat32, {4, 8});
class GraphBuilder {
 public:
  // Imports opset `default_opset` of ONNX's default domain unless the graph imports one already.
  explicit GraphBuilder(Graph& graph, int64_t default_opset = 17);

  Graph& graph() const { return graph_; }

  // The role (and loss bit) given to nodes created from now on; nullopt creates nodes without
  // `__op_role` (to exercise role inference).
  void SetRole(std::optional<OpRole> role, bool is_loss = false) {
    role_ = role;
    is_loss_ = is_loss;
  }

  // Graph inputs, initializers and outputs.
  Value* Input(std::string_view name, DataType dtype, std::vector<int64_t> dims);
  // A float32 initializer holding `values` (row-major; its size must match `dims`).
  Value* Initializer(std::string_view name, std::span<const int64_t> dims,
                     std::span<const float> values);
  Value* Initializer(std::string_view name, std::initializer_list<int64_t> dims,
                     std::span<const float> values) {
    return Initializer(name, std::span<const int64_t>(dims.begin(), dims.size()), values);
  }
  // An initializer of `dtype` whose bytes are all zero.
  Value* Zeros(std::string_view name, DataType dtype, std::span<const int64_t> dims);
  Value* Zeros(std::string_view name, DataType dtype, std::initializer_list<int64_t> dims) {
    return Zeros(name, dtype, std::span<const int64_t>(dims.begin(), dims.size()));
  }
  void Output(Value* value) { graph_.AddOutput(value); }

  // Appends a node with one output, named `output_name` (made unique), and returns that output.
  Value* Op(OpName op, std::initializer_list<Value*> inputs, std::string_view output_name,
            std::initializer_list<Attr> attrs = {});
  // Appends a node with any number of inputs and outputs and returns it.
  Node* AddNode(OpName op, std::span<Value* const> inputs,
                std::span<const std::string> output_names, std::initializer_list<Attr> attrs = {});

  // Sets an attribute on `node` with the setter of its kind.
  static void SetAttr(Node& node, const Attr& attr);

  // Records `value`'s static type and returns it, so a type can be given where the value is made.
  Value* SetType(Value* value, DataType dtype, std::vector<int64_t> dims);

 private:
  std::string NodeName(std::string_view op_type);

  Graph& graph_;
  // Per op type, the next number to try for a node name ("MatMul_3").
  std::unordered_map<std::string, int64_t> node_counts_;
  std::optional<OpRole> role_ = OpRole::kForward;
  bool is_loss_ = false;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_GRAPH_BUILDER_H_
