#include "zerograph/ir/graph_builder.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "zerograph/core/num_elements.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/value.h"

namespace zerograph {

GraphBuilder::GraphBuilder(Graph& graph, int64_t default_opset) : graph_(graph) {
  if (!graph_.OpsetVersion("")) graph_.SetOpsetVersion("", default_opset);
}

Value* GraphBuilder::Input(std::string_view name, DataType dtype, std::vector<int64_t> dims) {
  return graph_.AddInput(graph_.UniqueValueName(name), TensorType{dtype, std::move(dims)});
}

Value* GraphBuilder::Initializer(std::string_view name, std::span<const int64_t> dims,
                                 std::span<const float> values) {
  ZG_CHECK(NumElements(dims) == static_cast<int64_t>(values.size()), "initializer '", name,
           "': ", values.size(), " values for ", NumElements(dims), " elements");
  // ONNX's raw layout is little-endian, as is every host we build for.
  return graph_.AddInitializer(graph_.UniqueValueName(name), DataType::kFloat32, dims,
                               std::as_bytes(values));
}

Value* GraphBuilder::Zeros(std::string_view name, DataType dtype, std::span<const int64_t> dims) {
  // AddInitializer makes the name unique and takes the bytes over: one lookup, no copy.
  std::string bytes(static_cast<size_t>(NumElements(dims)) * ElementSize(dtype), '\0');
  return graph_.AddInitializer(name, dtype, dims, std::move(bytes));
}

Value* GraphBuilder::Op(OpName op, std::initializer_list<Value*> inputs,
                        std::string_view output_name, std::initializer_list<Attr> attrs) {
  const std::string names[] = {std::string(output_name)};
  Node* node = AddNode(op, std::span<Value* const>(inputs.begin(), inputs.size()), names, attrs);
  return node->output(0);
}

Node* GraphBuilder::AddNode(OpName op, std::span<Value* const> inputs,
                            std::span<const std::string> output_names,
                            std::initializer_list<Attr> attrs) {
  if (!op.domain.empty() && !graph_.OpsetVersion(op.domain)) graph_.SetOpsetVersion(op.domain, 1);
  Node* node = graph_.AddNode(op.op_type, op.domain, inputs, output_names, NodeName(op.op_type));
  if (role_) node->SetRole(*role_, is_loss_);
  for (const Attr& attr : attrs) SetAttr(*node, attr);
  return node;
}

void GraphBuilder::SetAttr(Node& node, const Attr& attr) {
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          node.SetInt(attr.name, value);
        } else if constexpr (std::is_same_v<T, float>) {
          node.SetFloat(attr.name, value);
        } else if constexpr (std::is_same_v<T, std::string>) {
          node.SetString(attr.name, value);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          node.SetInts(attr.name, value);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          node.SetFloats(attr.name, value);
        } else {
          node.SetStrings(attr.name, value);
        }
      },
      attr.value);
}

Value* GraphBuilder::SetType(Value* value, DataType dtype, std::vector<int64_t> dims) {
  graph_.SetValueType(value, TensorType{dtype, std::move(dims)});
  return value;
}

std::string GraphBuilder::NodeName(std::string_view op_type) {
  int64_t& count = node_counts_[std::string(op_type)];
  std::string name = StrCat(op_type, "_", count++);
  while (graph_.FindNode(name) != nullptr) name = StrCat(op_type, "_", count++);
  return name;
}

}  // namespace zerograph
