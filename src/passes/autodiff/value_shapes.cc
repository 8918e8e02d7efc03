#include "passes/autodiff/value_shapes.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "zerograph/core/num_elements.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/shape_inference.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

// Distinct primes for the symbolic dims of the graph inputs, one list per probe set; the lists
// share no number, so every symbolic dim differs between the two runs.
constexpr int64_t kProbes[2][12] = {{7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47},
                                    {101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157}};

// Shapes and the index lists made from them are short; a longer int64 tensor is data.
constexpr int64_t kMaxFoldedElements = 64;

std::optional<HostValue> InitializerValue(const Value& value) {
  const Tensor* tensor = value.initializer();
  if (tensor == nullptr) return std::nullopt;
  StatusOr<std::span<const std::byte>> bytes = tensor->Bytes();
  if (!bytes.ok()) return std::nullopt;
  return HostValue{tensor->dtype(), tensor->dims(), *bytes};
}

// The integers a Constant node holds (value_int, value_ints, or an int64 `value` tensor, as
// torch.onnx.export writes a Reshape's shape); nullopt for any other constant.
std::optional<std::vector<int64_t>> ConstantNodeInts(const Node& node) {
  if (std::optional<int64_t> one = node.GetInt("value_int")) return std::vector<int64_t>{*one};
  if (std::optional<std::span<const int64_t>> many = node.GetInts("value_ints")) {
    return std::vector<int64_t>(many->begin(), many->end());
  }
  const onnx::AttributeProto* value = node.FindAttribute("value");
  if (value == nullptr || !value->has_t() || value->t().data_type() != onnx::TensorProto::INT64) {
    return std::nullopt;
  }
  const onnx::TensorProto& tensor = value->t();
  if (!tensor.has_raw_data()) {
    return std::vector<int64_t>(tensor.int64_data().begin(), tensor.int64_data().end());
  }
  std::vector<int64_t> ints(tensor.raw_data().size() / sizeof(int64_t));
  std::memcpy(ints.data(), tensor.raw_data().data(), ints.size() * sizeof(int64_t));
  return ints;
}

// FNV-1a over the dtype and the dims.
size_t HashDims(DataType dtype, std::span<const int64_t> dims) {
  uint64_t hash = 0xcbf29ce484222325u;
  auto mix = [&](uint64_t word) { hash = (hash ^ word) * 0x100000001b3u; };
  mix(static_cast<uint64_t>(dtype));
  for (int64_t d : dims) mix(static_cast<uint64_t>(d));
  return static_cast<size_t>(hash);
}

}  // namespace

size_t ValueShapes::SpecHash::operator()(const TensorSpec& spec) const {
  return HashDims(spec.dtype, spec.shape);
}

size_t ValueShapes::TypeHash::operator()(const TensorType& type) const {
  // An unknown rank differs from a scalar's empty dims.
  return type.dims ? HashDims(type.dtype, *type.dims) : ~HashDims(type.dtype, {});
}

size_t ValueShapes::IntsHash::operator()(const std::vector<int64_t>& values) const {
  return HashDims(DataType::kInt64, values);
}

void ValueShapes::Set(const Value& value, int probe, std::optional<TensorSpec> spec) {
  std::vector<const TensorSpec*>& specs = specs_[static_cast<size_t>(probe)];
  const auto id = static_cast<size_t>(value.id());
  if (id >= specs.size()) specs.resize(id + 1);
  specs[id] = spec ? &*spec_pool_.insert(std::move(*spec)).first : nullptr;
}

void ValueShapes::SetIntValues(const Value& value, int probe, std::vector<int64_t> values) {
  std::vector<const std::vector<int64_t>*>& known = int_values_[static_cast<size_t>(probe)];
  const auto id = static_cast<size_t>(value.id());
  if (id >= known.size()) known.resize(id + 1);
  known[id] = &*ints_pool_.insert(std::move(values)).first;
}

const TensorSpec* ValueShapes::probed(const Value& value, int probe) const {
  const std::vector<const TensorSpec*>& specs = specs_[static_cast<size_t>(probe)];
  const auto id = static_cast<size_t>(value.id());
  return id < specs.size() ? specs[id] : nullptr;
}

StatusOr<ValueShapes> ValueShapes::Infer(const Graph& graph) {
  ValueShapes shapes;
  for (auto& specs : shapes.specs_) specs.resize(static_cast<size_t>(graph.value_id_bound()));
  // The probe index of each symbolic dim: one per name, a new one per unnamed dim.
  std::unordered_map<std::string_view, size_t> named;
  size_t next_probe = 0;
  for (const Value* input : graph.inputs()) {
    std::optional<TensorType> type = input->type();
    if (!type || type->dtype == DataType::kUndefined || !type->dims) continue;
    const std::vector<std::string_view> names = input->dim_params();
    std::vector<size_t> probe_of(type->dims->size());
    for (size_t i = 0; i < probe_of.size(); ++i) {
      if ((*type->dims)[i] >= 0) continue;
      const std::string_view name = i < names.size() ? names[i] : std::string_view();
      if (name.empty()) {
        probe_of[i] = next_probe++;
      } else {
        auto [it, added] = named.emplace(name, next_probe);
        next_probe += added ? 1 : 0;
        probe_of[i] = it->second;
      }
    }
    for (int probe = 0; probe < 2; ++probe) {
      TensorSpec spec{type->dtype, *type->dims};
      for (size_t i = 0; i < spec.shape.size(); ++i) {
        if (spec.shape[i] < 0) spec.shape[i] = kProbes[probe][probe_of[i] % std::size(kProbes[0])];
      }
      shapes.Set(*input, probe, std::move(spec));
    }
  }
  for (const Value* initializer : graph.initializers()) shapes.AddInitializer(*initializer);
  for (const Node* node : graph.nodes()) {
    Status inferred = shapes.InferNode(*node);
    if (!inferred.ok()) {
      return std::move(inferred).WithContext(
          "inferring shapes with the graph inputs' symbolic dims bound to probe sizes (primes "
          "from 7; a dim_param name shares one, unnamed dims are taken as different)");
    }
  }
  return shapes;
}

void ValueShapes::AddInitializer(const Value& initializer) {
  std::optional<TensorSpec> spec = RecordedSpec(initializer);
  Set(initializer, 0, spec);
  Set(initializer, 1, std::move(spec));
  const Tensor& tensor = *initializer.initializer();
  if (tensor.dtype() != DataType::kInt64 || tensor.numel() > kMaxFoldedElements) return;
  StatusOr<std::span<const std::byte>> bytes = tensor.Bytes();
  if (!bytes.ok()) return;
  std::vector<int64_t> values(static_cast<size_t>(tensor.numel()));
  // memcpy from an empty tensor's null data is undefined even for 0 bytes (UBSan).
  if (!values.empty()) std::memcpy(values.data(), bytes->data(), values.size() * sizeof(int64_t));
  SetIntValues(initializer, 0, values);
  SetIntValues(initializer, 1, std::move(values));
}

const std::vector<int64_t>* ValueShapes::int_values(const Value& value, int probe) const {
  const std::vector<const std::vector<int64_t>*>& known = int_values_[static_cast<size_t>(probe)];
  const auto id = static_cast<size_t>(value.id());
  return id < known.size() ? known[id] : nullptr;
}

void ValueShapes::FoldShapeValues(const Node& node, int probe,
                                  std::span<const TensorSpec* const> inputs) {
  const Value* output = node.num_outputs() == 1 ? node.output(0) : nullptr;
  const TensorSpec* spec = output != nullptr ? probed(*output, probe) : nullptr;
  if (spec == nullptr || spec->dtype != DataType::kInt64 || spec->shape.size() > 1 ||
      NumElements(spec->shape) > kMaxFoldedElements) {
    return;
  }
  auto input_values = [&](size_t i) {
    const Value* input = i < node.num_inputs() ? node.input(i) : nullptr;
    return input != nullptr ? int_values(*input, probe) : nullptr;
  };
  std::optional<std::vector<int64_t>> values;
  const OpContract* contract = node.contract();
  if (node.Is("", "Constant")) {
    values = ConstantNodeInts(node);
  } else if (contract != nullptr && contract->values_from_shapes != nullptr) {
    StatusOr<std::vector<int64_t>> computed =
        contract->values_from_shapes(ShapeContext{&node, inputs, {}, /*nranks=*/1});
    if (computed.ok()) values = std::move(*computed);
  } else if (node.domain().empty() && (node.op_type() == "Unsqueeze" ||
                                       node.op_type() == "Squeeze" || node.op_type() == "Reshape" ||
                                       node.op_type() == "Cast" || node.op_type() == "Identity")) {
    if (const std::vector<int64_t>* in = input_values(0)) values = *in;
  } else if (node.Is("", "Concat")) {
    values.emplace();
    for (size_t i = 0; i < node.num_inputs() && values; ++i) {
      const std::vector<int64_t>* in = input_values(i);
      if (in == nullptr) values.reset();
      if (in != nullptr) values->insert(values->end(), in->begin(), in->end());
    }
  } else if (node.Is("", "Gather") && node.GetInt("axis").value_or(0) == 0) {
    const std::vector<int64_t>* data = input_values(0);
    const std::vector<int64_t>* indices = input_values(1);
    if (data != nullptr && indices != nullptr) {
      values.emplace();
      const auto n = static_cast<int64_t>(data->size());
      for (int64_t index : *indices) {
        if (index < -n || index >= n) return;
        values->push_back((*data)[static_cast<size_t>(index < 0 ? index + n : index)]);
      }
    }
  }
  if (values && static_cast<int64_t>(values->size()) == NumElements(spec->shape)) {
    SetIntValues(*output, probe, std::move(*values));
  }
}

void ValueShapes::BindInput(const Value& input, TensorSpec probe0, TensorSpec probe1) {
  Set(input, 0, std::move(probe0));
  Set(input, 1, std::move(probe1));
}

bool ValueShapes::ProbesAgree(const Node& node) const {
  // The pools hold each spec and int64 list once, so equal ones are the same object.
  for (const Value* input : node.inputs()) {
    if (input != nullptr && (probed(*input, 0) != probed(*input, 1) ||
                             int_values(*input, 0) != int_values(*input, 1))) {
      return false;
    }
  }
  return true;
}

void ValueShapes::CopyProbe0(const Value& value) {
  const auto id = static_cast<size_t>(value.id());
  if (specs_[1].size() <= id) specs_[1].resize(id + 1);
  if (int_values_[1].size() <= id) int_values_[1].resize(id + 1);
  specs_[1][id] = probed(value, 0);
  int_values_[1][id] = int_values(value, 0);
}

Status ValueShapes::InferNode(const Node& node) {
  const OpContract* contract = node.contract();
  std::vector<const TensorSpec*> inputs(node.num_inputs());
  std::vector<std::optional<HostValue>> host_values(node.num_inputs());
  std::vector<const HostValue*> values(node.num_inputs());
  for (int probe = 0; probe < 2; ++probe) {
    if (probe == 1 && ProbesAgree(node)) {
      // The node reads nothing that differs between the probe sets (a weight's gradient, a
      // constant's shape): its outputs do not either, and its shape function need not run again.
      for (const Value* output : node.outputs()) {
        if (output != nullptr) CopyProbe0(*output);
      }
      break;
    }
    // Known when every input is, and so is the value of every host-read input.
    bool known = contract != nullptr;
    for (size_t i = 0; i < node.num_inputs() && known; ++i) {
      const Value* input = node.input(i);
      if (input == nullptr) continue;
      inputs[i] = probed(*input, probe);
      known = inputs[i] != nullptr;
      if (known && contract->IsHostInput(i)) {
        host_values[i] = InitializerValue(*input);
        if (const std::vector<int64_t>* folded = int_values(*input, probe);
            !host_values[i] && folded != nullptr) {
          host_values[i] = HostValue{DataType::kInt64, inputs[i]->shape,
                                     std::as_bytes(std::span<const int64_t>(*folded))};
        }
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
      Set(*output, probe,
          recorded ? std::move(recorded)
          : specs  ? std::optional<TensorSpec>(std::move((*specs)[o]))
                   : std::nullopt);
    }
    if (specs) FoldShapeValues(node, probe, inputs);
  }
  return Status::Ok();
}

const TensorType& ValueShapes::type(const Value& value) const {
  const auto id = static_cast<size_t>(value.id());
  if (id >= types_.size()) types_.resize(id + 1);
  const TensorType*& known = types_[id];
  if (known != nullptr) return *known;
  TensorType type = value.type().value_or(TensorType{});
  const TensorSpec* a = probed(value, 0);
  const TensorSpec* b = probed(value, 1);
  if (a != nullptr && b != nullptr && a->shape.size() == b->shape.size()) {
    type.dtype = a->dtype;
    std::vector<int64_t> dims(a->shape.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i] = a->shape[i] == b->shape[i] ? a->shape[i] : TensorType::kUnknownDim;
    }
    type.dims = std::move(dims);
  }
  known = &*type_pool_.insert(std::move(type)).first;
  return *known;
}

DataType ValueShapes::dtype(const Value& value) const {
  const TensorSpec* a = probed(value, 0);
  const TensorSpec* b = probed(value, 1);
  if (a != nullptr && b != nullptr && a->shape.size() == b->shape.size()) return a->dtype;
  return type(value).dtype;
}

}  // namespace zerograph::autodiff
