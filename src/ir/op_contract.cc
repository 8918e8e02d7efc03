#include "zerograph/ir/op_contract.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include "ir/contracts/contracts.h"
#include "ir/contracts/shape_functions.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"

namespace zerograph {
namespace {

std::string Label(const Node& node) {
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

std::string_view ArityName(OpFormal::Arity arity) {
  switch (arity) {
    case OpFormal::Arity::kSingle:
      return "single";
    case OpFormal::Arity::kOptional:
      return "optional";
    case OpFormal::Arity::kVariadic:
    case OpFormal::Arity::kVariadicOrNone:
      return "variadic";
  }
  return "?";
}

bool IsVariadic(const OpFormal& formal) {
  return formal.arity == OpFormal::Arity::kVariadic ||
         formal.arity == OpFormal::Arity::kVariadicOrNone;
}

// [min, max] counts a node may have for `formals`; max is nullopt past a variadic formal.
std::pair<size_t, std::optional<size_t>> CountRange(const std::vector<OpFormal>& formals) {
  size_t min = 0;
  for (size_t i = 0; i < formals.size(); ++i) {
    if (formals[i].arity == OpFormal::Arity::kSingle ||
        formals[i].arity == OpFormal::Arity::kVariadic) {
      min = i + 1;
    }
  }
  if (!formals.empty() && IsVariadic(formals.back())) return {min, std::nullopt};
  return {min, formals.size()};
}

Status CheckCount(const Node& node, std::string_view what, size_t count,
                  const std::vector<OpFormal>& formals) {
  auto [min, max] = CountRange(formals);
  if (count >= min && (!max || count <= *max)) return Status::Ok();
  const std::string expected = !max          ? StrCat("at least ", min)
                               : min == *max ? StrCat(min)
                                             : StrCat(min, " to ", *max);
  return InvalidArgumentError(
      StrCat(Label(node), ": has ", count, " ", what, ", expected ", expected));
}

// An optimizer's inputs and outputs must split into its layout's per-parameter groups.
Status CheckOptimizerCounts(const Node& node, const OptimizerLayout& layout) {
  ZG_RETURN_IF_NOT(layout.NumParams(node.num_inputs(), node.num_outputs()).has_value(), Label(node),
                   ": has ", node.num_inputs(), " inputs and ", node.num_outputs(),
                   " outputs, which do not fit ", layout.num_scalars, " scalars and ",
                   2 + layout.num_states, " inputs per parameter",
                   layout.optional_control ? " (then an optional control)" : "");
  return Status::Ok();
}

std::string_view AttributeTypeName(AttributeType type) {
  switch (type) {
    case AttributeType::kFloat:
      return "FLOAT";
    case AttributeType::kInt:
      return "INT";
    case AttributeType::kString:
      return "STRING";
    case AttributeType::kTensor:
      return "TENSOR";
    case AttributeType::kFloats:
      return "FLOATS";
    case AttributeType::kInts:
      return "INTS";
    case AttributeType::kStrings:
      return "STRINGS";
    default:
      return "another type";
  }
}

Status MissingAttribute(const Node& node, std::string_view name) {
  return InvalidArgumentError(
      StrCat(Label(node), ": attribute '", name, "' is required and has no default"));
}

// The default of the version of the node's op that its graph's opset selects (defaults change
// between versions: Softmax's axis, Dropout's ratio); for an attribute that version does not
// declare, of the newest version that does: an attribute a later version dropped (Clip-6's min,
// which Clip-11 takes as an input) keeps its default.
template <typename T>
const T* DefaultOf(const Node& node, std::string_view name) {
  const OpVersions* versions = node.op_versions();
  if (versions == nullptr) return nullptr;
  if (const OpContract* own = node.contract()) {
    if (const OpAttribute* attribute = own->FindAttribute(name)) {
      return std::get_if<T>(&attribute->default_value);
    }
  }
  for (auto contract = versions->rbegin(); contract != versions->rend(); ++contract) {
    if (const OpAttribute* attribute = contract->FindAttribute(name)) {
      return std::get_if<T>(&attribute->default_value);
    }
  }
  return nullptr;
}

Status WrongType(const Node& node, std::string_view name, std::string_view expected) {
  return InvalidArgumentError(
      StrCat(Label(node), ": attribute '", name, "' must be of type ", expected));
}

}  // namespace

std::optional<size_t> OptimizerLayout::NumParams(size_t num_inputs, size_t num_outputs) const {
  const size_t per_output = 1 + static_cast<size_t>(num_states);  // X', the states; no G'
  if (num_outputs == 0 || num_outputs % per_output != 0) return std::nullopt;
  const size_t n = num_outputs / per_output;
  const size_t groups_end = static_cast<size_t>(num_scalars) + n * (per_output + 1);
  if (num_inputs == groups_end || (optional_control && num_inputs == groups_end + 1)) return n;
  return std::nullopt;
}

bool OptimizerLayout::HasControl(size_t num_inputs, size_t num_outputs) const {
  const std::optional<size_t> n = NumParams(num_inputs, num_outputs);
  return n &&
         num_inputs > static_cast<size_t>(num_scalars) + *n * static_cast<size_t>(2 + num_states);
}

StatusOr<std::vector<int64_t>> ReadInts(const HostValue& value, std::string_view what) {
  ZG_RETURN_IF_NOT(value.dtype == DataType::kInt64 || value.dtype == DataType::kInt32, what,
                   " must be int64 or int32, got ", DataTypeName(value.dtype));
  ZG_RETURN_IF_NOT(value.shape.size() <= 1, what, " must be 1-D, got shape ",
                   ShapeToString(value.shape));
  const size_t size = ElementSize(value.dtype);
  std::vector<int64_t> ints(value.bytes.size() / size);
  for (size_t i = 0; i < ints.size(); ++i) {
    if (value.dtype == DataType::kInt64) {
      std::memcpy(&ints[i], value.bytes.data() + i * size, size);
    } else {
      int32_t narrow;
      std::memcpy(&narrow, value.bytes.data() + i * size, size);
      ints[i] = narrow;
    }
  }
  return ints;
}

StatusOr<const TensorSpec*> ShapeContext::Required(size_t i) const {
  const TensorSpec* spec = input(i);
  ZG_RETURN_IF_NOT(spec != nullptr, "input ", i, " is missing");
  return spec;
}

const TypeConstraint* OpContract::FindConstraint(std::string_view type) const {
  for (const TypeConstraint& constraint : type_constraints) {
    if (constraint.name == type) return &constraint;
  }
  return nullptr;
}

const OpAttribute* OpContract::FindAttribute(std::string_view attribute) const {
  for (const OpAttribute& candidate : attributes) {
    if (candidate.name == attribute) return &candidate;
  }
  return nullptr;
}

const OpFormal* OpContract::InputFormal(size_t index) const {
  if (index < inputs.size()) return &inputs[index];
  if (!inputs.empty() && IsVariadic(inputs.back())) return &inputs.back();
  return nullptr;
}

bool OpContract::IsHostInput(size_t index) const {
  const OpFormal* formal = InputFormal(index);
  return formal != nullptr && formal->host;
}

std::string OpContract::ToString() const {
  return domain.empty() ? StrCat(name, "-", since_version)
                        : StrCat(domain, "::", name, "-", since_version);
}

const OpContracts& OpContracts::Get() {
  static const OpContracts* const contracts = [] {
    auto* built = new OpContracts;
    Status status = contracts::AddStandardContracts(*built);
    if (status.ok()) status = contracts::AddDataMovementContracts(*built);
    if (status.ok()) status = contracts::AddTrainingContracts(*built);
    if (status.ok()) status = contracts::AddZerographContracts(*built);
    if (status.ok()) status = contracts::AddReductionContracts(*built);
    if (status.ok()) status = contracts::AddMicrosoftElementwiseContracts(*built);
    if (status.ok()) status = contracts::AddLossMatMulContracts(*built);
    // The lists are ours: a malformed one is a bug every test finds at once.
    ZG_CHECK(status.ok(), status.ToString());
    return built;
  }();
  return *contracts;
}

std::string_view NormalizeDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

const OpVersions* OpContracts::FindOp(std::string_view domain, std::string_view name) const {
  auto by_name = by_domain_.find(NormalizeDomain(domain));
  if (by_name == by_domain_.end()) return nullptr;
  auto versions = by_name->second.find(name);
  return versions == by_name->second.end() ? nullptr : &versions->second;
}

const OpContract* OpContracts::PickVersion(const OpVersions& versions,
                                           std::optional<int64_t> opset_version) {
  const OpContract* found = nullptr;
  for (const OpContract& contract : versions) {
    if (opset_version && contract.since_version > *opset_version) break;
    found = &contract;
  }
  return found;
}

const OpContract* OpContracts::Find(std::string_view domain, std::string_view name,
                                    std::optional<int64_t> opset_version) const {
  const OpVersions* versions = FindOp(domain, name);
  return versions == nullptr ? nullptr : PickVersion(*versions, opset_version);
}

const OpContract* FindContract(const Node& node, std::optional<int64_t> opset_version) {
  const OpVersions* versions = node.op_versions();
  return versions == nullptr ? nullptr : OpContracts::PickVersion(*versions, opset_version);
}

const OpContract* GraphContracts::Find(const Node& node) {
  const OpVersions* versions = node.op_versions();
  if (versions == nullptr) return nullptr;
  for (const auto& [known, contract] : known_) {
    if (known == versions) return contract;
  }
  const OpContract* contract =
      OpContracts::PickVersion(*versions, graph_.OpsetVersion(node.domain()));
  known_.emplace_back(versions, contract);
  return contract;
}

std::vector<const OpContract*> OpContracts::All() const {
  std::vector<const OpContract*> all;
  for (const auto& [domain, by_name] : by_domain_) {
    for (const auto& [name, versions] : by_name) {
      for (const OpContract& contract : versions) all.push_back(&contract);
    }
  }
  return all;
}

Status OpContracts::Add(OpContract contract) {
  const std::string name = contract.ToString();
  ZG_RET_CHECK(contract.infer != nullptr, "contract ", name, " has no shape function");
  for (const std::vector<OpFormal>* formals : {&contract.inputs, &contract.outputs}) {
    for (const OpFormal& formal : *formals) {
      ZG_RET_CHECK(formal.type.empty() || contract.FindConstraint(formal.type) != nullptr,
                   "contract ", name, ": formal '", formal.name, "' has type '", formal.type,
                   "', which no constraint defines");
      ZG_RET_CHECK(!IsVariadic(formal) || &formal == &formals->back(), "contract ", name, ": ",
                   ArityName(formal.arity), " formal '", formal.name, "' is not last");
    }
  }
  if (contract.keeps_input_shape == nullptr) {
    contract.keeps_input_shape = contracts::KeepsInputShapeRuleOf(contract.infer);
  }
  if (contract.optimizer) {
    optimizers_.push_back({contract.domain, contract.name, *contract.optimizer});
  }
  std::vector<OpContract>& versions =
      by_domain_[std::string(NormalizeDomain(contract.domain))][std::string(contract.name)];
  auto at = std::find_if(versions.begin(), versions.end(), [&](const OpContract& other) {
    return other.since_version >= contract.since_version;
  });
  ZG_RET_CHECK(at == versions.end() || at->since_version != contract.since_version, "contract ",
               name, " is declared twice");
  versions.insert(at, std::move(contract));
  return Status::Ok();
}

Status CheckNodeAgainstContract(const Node& node, const OpContract& contract,
                                AttributeCheck attributes) {
  ZG_RETURN_IF_ERROR(CheckCount(node, "inputs", node.num_inputs(), contract.inputs));
  ZG_RETURN_IF_ERROR(CheckCount(node, "outputs", node.num_outputs(), contract.outputs));
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) != nullptr) continue;
    const OpFormal* formal = contract.InputFormal(i);
    ZG_RETURN_IF_NOT(formal->arity != OpFormal::Arity::kSingle, Label(node), ": omits input ", i,
                     " ('", formal->name, "'), which is not optional");
  }
  for (const OpAttribute& attribute : contract.attributes) {
    if (!attribute.required && attributes == AttributeCheck::kRequired) continue;
    std::optional<AttributeType> type = node.GetAttributeType(attribute.name);
    if (!type) {
      ZG_RETURN_IF_NOT(!attribute.required, Label(node), ": needs attribute '", attribute.name,
                       "'");
      continue;
    }
    ZG_RETURN_IF_NOT(*type == attribute.type, Label(node), ": attribute '", attribute.name,
                     "' has type ", AttributeTypeName(*type), ", expected ",
                     AttributeTypeName(attribute.type));
  }
  if (contract.optimizer) ZG_RETURN_IF_ERROR(CheckOptimizerCounts(node, *contract.optimizer));
  if (contract.check != nullptr) {
    ZG_RETURN_IF_ERROR(contract.check(node).WithContext(Label(node)));
  }
  return Status::Ok();
}

StatusOr<int64_t> ContractInt(const Node& node, std::string_view name) {
  if (std::optional<int64_t> value = node.GetInt(name)) return *value;
  if (node.HasAttribute(name)) return WrongType(node, name, "INT");
  if (const int64_t* value = DefaultOf<int64_t>(node, name)) return *value;
  return MissingAttribute(node, name);
}

StatusOr<float> ContractFloat(const Node& node, std::string_view name) {
  if (std::optional<float> value = node.GetFloat(name)) return *value;
  if (node.HasAttribute(name)) return WrongType(node, name, "FLOAT");
  if (const float* value = DefaultOf<float>(node, name)) return *value;
  return MissingAttribute(node, name);
}

StatusOr<std::string> ContractString(const Node& node, std::string_view name) {
  if (std::optional<std::string_view> value = node.GetString(name)) return std::string(*value);
  if (node.HasAttribute(name)) return WrongType(node, name, "STRING");
  if (const std::string_view* value = DefaultOf<std::string_view>(node, name)) {
    return std::string(*value);
  }
  return MissingAttribute(node, name);
}

StatusOr<std::vector<int64_t>> ContractInts(const Node& node, std::string_view name) {
  if (std::optional<std::span<const int64_t>> value = node.GetInts(name)) {
    return std::vector<int64_t>(value->begin(), value->end());
  }
  if (node.HasAttribute(name)) return WrongType(node, name, "INTS");
  if (const std::vector<int64_t>* value = DefaultOf<std::vector<int64_t>>(node, name)) {
    return *value;
  }
  return MissingAttribute(node, name);
}

}  // namespace zerograph
