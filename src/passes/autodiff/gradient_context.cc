#include "passes/autodiff/gradient_context.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

std::string Label(const Node& node) {
  return StrCat("node '", node.name(), "' (", node.domain().empty() ? "" : node.domain(),
                node.domain().empty() ? "" : ".", node.op_type(), ")");
}

// The base name of what a backward node computes for `forward`.
std::string GradName(const Node& forward) {
  return StrCat(forward.name().empty() ? forward.op_type() : forward.name(), "_grad");
}

template <typename T>
std::string BytesOf(std::span<const T> values) {
  std::string bytes(values.size_bytes(), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), values.size_bytes());
  return bytes;
}

}  // namespace

Value* GradientContext::input(size_t i) const {
  return i < node_.num_inputs() ? node_.input(i) : nullptr;
}

Value* GradientContext::output(size_t i) const {
  return i < node_.num_outputs() ? node_.output(i) : nullptr;
}

BackwardBuilder::BackwardBuilder(Graph& graph, ValueShapes shapes, std::vector<bool> needs_grad)
    : graph_(graph),
      shapes_(std::move(shapes)),
      needs_grad_(std::move(needs_grad)),
      gradient_(needs_grad_.size()) {}

Node* BackwardBuilder::AddNode(const Node& forward, OpName op, std::span<Value* const> inputs,
                               size_t num_outputs, std::initializer_list<Attr> attrs) {
  // Graph::AddNode makes the node's and the outputs' names unique ("X_grad", "X_grad_1", ...).
  const std::string base = GradName(forward);
  const std::vector<std::string> names(num_outputs, base);
  if (!op.domain.empty() && !graph_.OpsetVersion(op.domain)) graph_.SetOpsetVersion(op.domain, 1);
  Node* node = graph_.AddNode(op.op_type, op.domain, inputs, names, base, nullptr);
  node->SetRole(OpRole::kBackward);
  for (const Attr& attr : attrs) GraphBuilder::SetAttr(*node, attr);
  Status inferred = shapes_.InferNode(*node);
  if (!inferred.ok() && error_.ok()) {
    error_ = std::move(inferred).WithContext(StrCat("backward of ", Label(forward)));
  }
  return node;
}

Value* BackwardBuilder::Constant(DataType dtype, std::span<const int64_t> dims, std::string bytes) {
  std::string key = StrCat(static_cast<int>(dtype), ":", dims.size(), ":");
  key += BytesOf(dims);
  key += bytes;
  Value*& constant = constants_[key];
  if (constant == nullptr) {
    constant = graph_.AddInitializer(graph_.UniqueValueName("autodiff_const"), dtype, dims,
                                     std::move(bytes));
    shapes_.AddInitializer(*constant);
  }
  return constant;
}

Value* BackwardBuilder::Int64s(std::span<const int64_t> values) {
  const int64_t dims[] = {static_cast<int64_t>(values.size())};
  return Constant(DataType::kInt64, dims, BytesOf(values));
}

Value* BackwardBuilder::Scalar(float value, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return Constant(dtype, {}, BytesOf(std::span<const float>(&value, 1)));
    case DataType::kFloat64: {
      const double wide = value;
      return Constant(dtype, {}, BytesOf(std::span<const double>(&wide, 1)));
    }
    case DataType::kInt64: {
      const auto integer = static_cast<int64_t>(value);
      return Constant(dtype, {}, BytesOf(std::span<const int64_t>(&integer, 1)));
    }
    default: {
      // 16-bit floats: a Cast of the float32 constant, itself shared, rounds as the kernels do.
      const std::string key =
          StrCat("cast:", static_cast<int>(dtype), ":", std::bit_cast<uint32_t>(value));
      Value*& cast = constants_[key];
      if (cast == nullptr) {
        Value* wide = Scalar(value, DataType::kFloat32);
        const std::string names[] = {StrCat(wide->name(), "_cast")};
        Value* const inputs[] = {wide};
        Node* node = graph_.AddNode("Cast", "", inputs, names, names[0]);
        node->SetRole(OpRole::kBackward);
        node->SetInt("to", static_cast<int64_t>(dtype));
        Status inferred = shapes_.InferNode(*node);
        if (!inferred.ok() && error_.ok()) error_ = std::move(inferred);
        cast = node->output(0);
      }
      return cast;
    }
  }
}

Value* BackwardBuilder::ReduceToShapeOf(const Node& forward, Value* grad, const Value& like) {
  if (Value* reduced = StaticReduceToShapeOf(forward, grad, like)) return reduced;
  return DynamicReduceToShapeOf(forward, grad, like);
}

Value* BackwardBuilder::StaticReduceToShapeOf(const Node& forward, Value* grad, const Value& like) {
  // Decided on both probe sets: an axis is reduced when `like` has 1 there and `grad` has not in
  // either. A dim that is unknown, or equal to `like`'s in one probe only, leaves it open.
  const TensorSpec* g[2] = {shapes_.probed(*grad, 0), shapes_.probed(*grad, 1)};
  const TensorSpec* l[2] = {shapes_.probed(like, 0), shapes_.probed(like, 1)};
  if (!g[0] || !g[1] || !l[0] || !l[1]) return nullptr;
  const size_t rank = g[0]->shape.size();
  const size_t like_rank = l[0]->shape.size();
  if (g[1]->shape.size() != rank || l[1]->shape.size() != like_rank || like_rank > rank) {
    return nullptr;
  }
  const size_t lead = rank - like_rank;
  std::vector<int64_t> leading, ones;
  for (size_t a = 0; a < lead; ++a) leading.push_back(static_cast<int64_t>(a));
  for (size_t a = lead; a < rank; ++a) {
    bool equal = true, broadcast = true;
    for (int p = 0; p < 2; ++p) {
      const int64_t gd = g[p]->shape[a], ld = l[p]->shape[a - lead];
      equal = equal && gd == ld;
      broadcast = broadcast && ld == 1 && gd != 1;
    }
    if (broadcast) {
      ones.push_back(static_cast<int64_t>(a - lead));
    } else if (!equal) {
      return nullptr;
    }
  }
  // ReduceSum takes its axes as an input from opset 13, as an attribute before.
  const bool axes_as_input = opset() >= 13;
  auto reduce_sum = [&](Value* x, const std::vector<int64_t>& axes, int64_t keepdims) {
    if (!axes_as_input) {
      Value* const inputs[] = {x};
      return AddNode(forward, "ReduceSum", inputs, 1,
                     {Attr("axes", axes), Attr("keepdims", keepdims)})
          ->output(0);
    }
    Value* const inputs[] = {x, Int64s(axes)};
    return AddNode(forward, "ReduceSum", inputs, 1, {Attr("keepdims", keepdims)})->output(0);
  };
  Value* reduced = grad;
  if (!leading.empty()) reduced = reduce_sum(reduced, leading, 0);
  if (!ones.empty()) reduced = reduce_sum(reduced, ones, 1);
  return reduced;
}

// Which axes to reduce is computed when the graph runs, from the two shapes, as numpy's
// broadcasting rule says: `like`'s shape is padded with leading 1s to grad's rank, an axis is
// summed where it is 1 and grad's is not, and the sum is reshaped to `like`'s shape.
Value* BackwardBuilder::DynamicReduceToShapeOf(const Node& forward, Value* grad,
                                               const Value& like) {
  auto op = [&](OpName name, std::initializer_list<Value*> inputs,
                std::initializer_list<Attr> attrs = {}) {
    return AddNode(forward, name, std::span<Value* const>(inputs.begin(), inputs.size()), 1, attrs)
        ->output(0);
  };
  Value* grad_shape = op("Shape", {grad});
  // The graph's edges are non-const; reading `like` changes nothing of it.
  Value* like_shape = op("Shape", {const_cast<Value*>(&like)});
  // like's shape padded with leading 1s: Expand([1], [rank(grad) - rank(like)]) ++ like's shape.
  Value* lead = op("Sub", {op("Shape", {grad_shape}), op("Shape", {like_shape})});
  const int64_t one_values[] = {1}, zero_values[] = {0};
  Value* one = Int64s(one_values);
  Value* padded = op("Concat", {op("Expand", {one, lead}), like_shape}, {Attr("axis", 0)});
  Value* is_one = op("Equal", {padded, one});
  Value* grad_not_one = op("Not", {op("Equal", {grad_shape, one})});
  Value* axes =
      op("Squeeze", {op("NonZero", {op("And", {is_one, grad_not_one})}), Int64s(zero_values)});
  Value* summed =
      op("ReduceSum", {grad, axes}, {Attr("keepdims", 1), Attr("noop_with_empty_axes", 1)});
  return op("Reshape", {summed, like_shape});
}

Status BackwardBuilder::AddGradient(std::string_view source, const Value& value, Value* grad) {
  ZG_RET_CHECK(grad != nullptr, source, " gives '", value.name(), "' a null gradient");
  for (int p = 0; p < 2; ++p) {
    const TensorSpec* want = shapes_.probed(value, p);
    const TensorSpec* got = shapes_.probed(*grad, p);
    if (want == nullptr || got == nullptr) continue;
    ZG_RET_CHECK(*want == *got, source, " gives '", value.name(), "' (", DataTypeName(want->dtype),
                 ShapeToString(want->shape), ") a gradient of ", DataTypeName(got->dtype),
                 ShapeToString(got->shape));
  }
  ZG_RET_CHECK(needs_grad(value), source, " gives '", value.name(), "' a gradient it needs not");
  Value*& first = gradient_[static_cast<size_t>(value.id())];
  if (first == nullptr) {
    first = grad;
  } else {
    more_gradients_[value.id()].push_back(grad);
  }
  return Status::Ok();
}

Value* BackwardBuilder::TakeGradient(const Value& value) {
  if (!needs_grad(value)) return nullptr;
  Value*& grad = gradient_[static_cast<size_t>(value.id())];
  auto more = more_gradients_.find(value.id());
  if (grad == nullptr || more == more_gradients_.end()) return grad;
  std::vector<Value*> grads = {grad};
  grads.insert(grads.end(), more->second.begin(), more->second.end());
  more_gradients_.erase(more);
  const std::string names[] = {StrCat(value.name(), "_grad")};
  Node* sum = graph_.AddNode("Sum", "", grads, names, names[0]);
  sum->SetRole(OpRole::kBackward);
  Status inferred = shapes_.InferNode(*sum);
  if (!inferred.ok() && error_.ok()) error_ = std::move(inferred);
  // Kept as the one gradient: a value both trained and computed from another trained value is
  // asked for again at the end.
  grad = sum->output(0);
  return grad;
}

Status BackwardBuilder::TakeError() { return std::exchange(error_, Status::Ok()); }

bool NodeGradientContext::needs_grad(size_t i) const {
  const Value* value = input(i);
  return value != nullptr && builder_.needs_grad(*value);
}

Status NodeGradientContext::SetInputGrad(size_t i, Value* grad) {
  ZG_RET_CHECK(needs_grad(i), "the gradient rule of ", Label(node()),
               " sets the gradient of input ", i, ", which needs none");
  return builder_.AddGradient(StrCat("the gradient rule of ", Label(node())), *input(i), grad);
}

Value* NodeGradientContext::Op(OpName op, std::initializer_list<Value*> inputs,
                               std::initializer_list<Attr> attrs) {
  return AddNode(op, std::span<Value* const>(inputs.begin(), inputs.size()), 1, attrs)->output(0);
}

}  // namespace zerograph::autodiff
