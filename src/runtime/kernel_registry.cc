#include "zerograph/runtime/kernel_registry.h"

#include <algorithm>
#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph::runtime {
namespace {

std::string OpName(std::string_view domain, std::string_view op_type) {
  return domain.empty() ? std::string(op_type) : StrCat(domain, "::", op_type);
}

// Checks `def` against its op's contracts: each dtype the kernel claims for its type input must be
// one that some version allows (a kernel serves every version; ONNX widens the types over them).
// Adds the contracts' host-read inputs to the def's.
Status CheckAgainstContract(KernelDef& def, const std::string& name) {
  const OpVersions* versions = OpContracts::Get().FindOp(def.domain, def.op_type);
  ZG_RET_CHECK(versions != nullptr, "kernel ", name, " on ", DeviceTypeName(def.device),
               " is registered for an op without a contract (src/ir/contracts/)");
  for (DataType dtype : def.dtypes) {
    if (def.type_input < 0) break;  // an op without a typed input (Constant)
    bool allowed = false;
    for (const OpContract& contract : *versions) {
      const OpFormal* formal = contract.InputFormal(static_cast<size_t>(def.type_input));
      const TypeConstraint* constraint =
          formal != nullptr ? contract.FindConstraint(formal->type) : nullptr;
      ZG_RET_CHECK(constraint != nullptr, "kernel ", name, " selects by input ", def.type_input,
                   ", which ", contract.ToString(), " does not type");
      allowed |= std::find(constraint->allowed.begin(), constraint->allowed.end(), dtype) !=
                 constraint->allowed.end();
    }
    ZG_RET_CHECK(allowed, "kernel ", name, " on ", DeviceTypeName(def.device),
                 " is registered for ", DataTypeName(dtype), ", which ",
                 versions->back().ToString(), " forbids");
  }
  for (const OpContract& contract : *versions) {
    for (size_t i = 0; i < contract.inputs.size(); ++i) {
      const int index = static_cast<int>(i);
      if (contract.inputs[i].host && std::find(def.host_inputs.begin(), def.host_inputs.end(),
                                               index) == def.host_inputs.end()) {
        def.host_inputs.push_back(index);
      }
    }
  }
  std::sort(def.host_inputs.begin(), def.host_inputs.end());
  return Status::Ok();
}

}  // namespace

Status KernelRegistry::Register(KernelDef def) {
  def.domain = std::string(NormalizeDomain(def.domain));
  const std::string name = OpName(def.domain, def.op_type);
  ZG_RET_CHECK(def.factory != nullptr, "kernel ", name, " registered without a factory");
  ZG_RET_CHECK(!def.dtypes.empty(), "kernel ", name, " registered for no dtype");
  ZG_RETURN_IF_ERROR(CheckAgainstContract(def, name));
  OpEntry& entry = ops_[OpKey(def.domain, def.op_type, def.device)];
  if (entry.by_dtype.empty()) {
    entry.type_input = def.type_input;
    entry.host_inputs = def.host_inputs;
  }
  ZG_RET_CHECK(entry.type_input == def.type_input && entry.host_inputs == def.host_inputs,
               "kernels of ", name, " on ", DeviceTypeName(def.device),
               " disagree on their type input or host inputs");
  for (DataType dtype : def.dtypes) {
    ZG_RET_CHECK(!entry.by_dtype.contains(dtype), "kernel ", name, " on ",
                 DeviceTypeName(def.device), " for ", DataTypeName(dtype), " is registered twice");
    entry.by_dtype.emplace(dtype, def);
  }
  return Status::Ok();
}

const KernelDef* KernelRegistry::Find(std::string_view domain, std::string_view op_type,
                                      DeviceType device, DataType dtype) const {
  auto op = ops_.find(OpKey(NormalizeDomain(domain), op_type, device));
  if (op == ops_.end()) return nullptr;
  auto def = op->second.by_dtype.find(dtype);
  return def == op->second.by_dtype.end() ? nullptr : &def->second;
}

bool KernelRegistry::HasOp(std::string_view domain, std::string_view op_type,
                           DeviceType device) const {
  return ops_.contains(OpKey(NormalizeDomain(domain), op_type, device));
}

Status KernelRegistry::CheckEveryOpHasKernel(const Graph& graph, DeviceType device) const {
  // Missing ops in order of first use, each with its nodes.
  std::vector<std::pair<std::string, std::vector<const Node*>>> missing;
  for (const Node* node : graph.nodes()) {
    if (HasOp(node->domain(), node->op_type(), device)) continue;
    const std::string name = OpName(NormalizeDomain(node->domain()), node->op_type());
    auto op = std::find_if(missing.begin(), missing.end(),
                           [&](const auto& entry) { return entry.first == name; });
    if (op == missing.end()) op = missing.insert(missing.end(), {name, {}});
    op->second.push_back(node);
  }
  if (missing.empty()) return Status::Ok();
  std::vector<std::string> parts;
  for (const auto& [name, users] : missing) {
    parts.push_back(users.size() == 1 ? StrCat(name, " (node '", users[0]->name(), "')")
                                      : StrCat(name, " (", users.size(), " nodes, first '",
                                               users[0]->name(), "')"));
  }
  return NotFoundError(StrCat("no kernel on ", DeviceTypeName(device), " for ", missing.size(),
                              missing.size() == 1 ? " op: " : " ops: ", StrJoin(parts, ", "),
                              " (graph-exec --list-ops lists what this build runs)"));
}

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    const Node& node, DeviceType device, std::span<const DataType> input_dtypes, int rank,
    int nranks, std::optional<int64_t> opset_version) const {
  const std::string name = OpName(node.domain(), node.op_type());
  const std::string where = StrCat("node '", node.name(), "' (", name, ")");
  ZG_RET_CHECK(input_dtypes.size() == node.num_inputs(), where, ": ", input_dtypes.size(),
               " input dtypes for ", node.num_inputs(), " inputs");
  auto op = ops_.find(OpKey(NormalizeDomain(node.domain()), node.op_type(), device));
  if (op == ops_.end()) {
    return NotFoundError(StrCat(where, ": no kernel for ", name, " on ", DeviceTypeName(device)));
  }
  const OpEntry& entry = op->second;
  DataType dtype = DataType::kUndefined;
  if (entry.type_input >= 0) {
    const size_t i = static_cast<size_t>(entry.type_input);
    if (i >= input_dtypes.size() || input_dtypes[i] == DataType::kUndefined) {
      return InvalidArgumentError(
          StrCat(where, ": input ", i, " selects the kernel but is missing"));
    }
    dtype = input_dtypes[i];
  }
  auto def = entry.by_dtype.find(dtype);
  if (def == entry.by_dtype.end()) {
    std::vector<std::string_view> names;
    for (const auto& [registered, unused] : entry.by_dtype)
      names.push_back(DataTypeName(registered));
    return NotFoundError(StrCat(where, ": no kernel for ", name, " on ", DeviceTypeName(device),
                                " with ", DataTypeName(dtype), " input ", entry.type_input,
                                " (registered: ", StrJoin(names, ", "), ")"));
  }
  const OpContract* contract = FindContract(node, opset_version);
  if (contract == nullptr) {
    return NotFoundError(StrCat(where, ": ", name, " at opset ", opset_version.value_or(0),
                                " is older than every version zerograph implements"));
  }
  // The one place every node is checked against its contract before a kernel reads it.
  ZG_RETURN_IF_ERROR(CheckNodeAgainstContract(node, *contract));
  KernelInfo info{&node, device, dtype, rank, nranks, entry.host_inputs, contract};
  StatusOr<std::unique_ptr<OpKernel>> kernel = def->second.factory(info);
  if (!kernel.ok()) return std::move(kernel).status().WithContext(where);
  ZG_RET_CHECK(*kernel != nullptr, where, ": factory returned no kernel");
  return kernel;
}

std::vector<KernelKey> KernelRegistry::Keys() const {
  std::vector<KernelKey> keys;
  for (const auto& [op, entry] : ops_) {
    for (const auto& [dtype, def] : entry.by_dtype) {
      keys.push_back(KernelKey{std::get<0>(op), std::get<1>(op), std::get<2>(op), dtype});
    }
  }
  return keys;
}

}  // namespace zerograph::runtime
