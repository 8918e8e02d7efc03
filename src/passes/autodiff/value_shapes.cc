#include "passes/autodiff/value_shapes.h"

#include <cstddef>
#include <span>
#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

// Distinct primes for the symbolic dims of the graph inputs, one list per probe set; the lists
// share no number, so every symbolic dim differs between the two runs.
constexpr int64_t kProbes[2][8] = {{7, 11, 13, 17, 19, 23, 29, 31},
                                   {101, 103, 107, 109, 113, 127, 131, 137}};

// The recorded spec of `value`, when its type has every dimension.
std::optional<TensorSpec> RecordedSpec(const Value& value) {
  std::optional<TensorType> type = value.type();
  if (!type || type->dtype == DataType::kUndefined || !type->dims) return std::nullopt;
  for (int64_t d : *type->dims) {
    if (d < 0) return std::nullopt;
  }
  return TensorSpec{type->dtype, *type->dims};
}

std::optional<HostValue> InitializerValue(const Value& value) {
  const Tensor* tensor = value.initializer();
  if (tensor == nullptr) return std::nullopt;
  StatusOr<std::span<const std::byte>> bytes = tensor->Bytes();
  if (!bytes.ok()) return std::nullopt;
  return HostValue{tensor->dtype(), tensor->dims(), *bytes};
}

}  // namespace

std::optional<TensorSpec>& ValueShapes::slot(const Value& value, int probe) {
  std::vector<std::optional<TensorSpec>>& specs = specs_[static_cast<size_t>(probe)];
  const auto id = static_cast<size_t>(value.id());
  if (id >= specs.size()) specs.resize(id + 1);
  return specs[id];
}

const TensorSpec* ValueShapes::probed(const Value& value, int probe) const {
  const std::vector<std::optional<TensorSpec>>& specs = specs_[static_cast<size_t>(probe)];
  const auto id = static_cast<size_t>(value.id());
  return id < specs.size() && specs[id] ? &*specs[id] : nullptr;
}

StatusOr<ValueShapes> ValueShapes::Infer(const Graph& graph) {
  ValueShapes shapes;
  for (auto& specs : shapes.specs_) specs.resize(static_cast<size_t>(graph.value_id_bound()));
  size_t next_probe = 0;
  for (const Value* input : graph.inputs()) {
    std::optional<TensorType> type = input->type();
    if (!type || type->dtype == DataType::kUndefined || !type->dims) continue;
    for (int probe = 0; probe < 2; ++probe) {
      TensorSpec spec{type->dtype, *type->dims};
      size_t k = next_probe;
      for (int64_t& d : spec.shape) {
        if (d < 0) d = kProbes[probe][k++ % std::size(kProbes[probe])];
      }
      shapes.slot(*input, probe) = std::move(spec);
    }
    for (int64_t d : *type->dims) next_probe += d < 0 ? 1 : 0;
  }
  for (const Value* initializer : graph.initializers()) shapes.AddInitializer(*initializer);
  for (const Node* node : graph.nodes()) ZG_RETURN_IF_ERROR(shapes.InferNode(*node));
  return shapes;
}

void ValueShapes::AddInitializer(const Value& initializer) {
  std::optional<TensorSpec> spec = RecordedSpec(initializer);
  slot(initializer, 0) = spec;
  slot(initializer, 1) = std::move(spec);
}

Status ValueShapes::InferNode(const Node& node) {
  const OpContract* contract = node.contract();
  std::vector<const TensorSpec*> inputs(node.num_inputs());
  std::vector<std::optional<HostValue>> host_values(node.num_inputs());
  std::vector<const HostValue*> values(node.num_inputs());
  for (int probe = 0; probe < 2; ++probe) {
    // Known when every input is, and so is the value of every host-read input.
    bool known = contract != nullptr;
    for (size_t i = 0; i < node.num_inputs() && known; ++i) {
      const Value* input = node.input(i);
      if (input == nullptr) continue;
      inputs[i] = probed(*input, probe);
      known = inputs[i] != nullptr;
      if (known && contract->IsHostInput(i)) {
        host_values[i] = InitializerValue(*input);
        known = host_values[i].has_value();
        values[i] = known ? &*host_values[i] : nullptr;
      }
    }
    std::optional<std::vector<TensorSpec>> specs;
    if (known) {
      StatusOr<std::vector<TensorSpec>> inferred =
          contract->infer(ShapeContext{&node, inputs, values, /*nranks=*/1});
      if (!inferred.ok()) {
        return std::move(inferred).status().WithContext(
            StrCat("node '", node.name(), "' (", node.op_type(), ")"));
      }
      if (inferred->size() == node.num_outputs()) specs = std::move(*inferred);
    }
    for (size_t o = 0; o < node.num_outputs(); ++o) {
      const Value* output = node.output(o);
      if (output == nullptr) continue;
      std::optional<TensorSpec> recorded = RecordedSpec(*output);
      slot(*output, probe) = recorded ? std::move(recorded)
                             : specs  ? std::optional<TensorSpec>(std::move((*specs)[o]))
                                      : std::nullopt;
    }
  }
  return Status::Ok();
}

const TensorType& ValueShapes::type(const Value& value) const {
  const auto id = static_cast<size_t>(value.id());
  if (id >= types_.size()) types_.resize(id + 1);
  std::optional<TensorType>& type = types_[id];
  if (type) return *type;
  type = value.type().value_or(TensorType{});
  const TensorSpec* a = probed(value, 0);
  const TensorSpec* b = probed(value, 1);
  if (a != nullptr && b != nullptr && a->shape.size() == b->shape.size()) {
    type->dtype = a->dtype;
    std::vector<int64_t> dims(a->shape.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i] = a->shape[i] == b->shape[i] ? a->shape[i] : TensorType::kUnknownDim;
    }
    type->dims = std::move(dims);
  }
  return *type;
}

}  // namespace zerograph::autodiff
