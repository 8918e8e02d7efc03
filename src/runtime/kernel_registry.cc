#include "zerograph/runtime/kernel_registry.h"

#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/node.h"

namespace zerograph::runtime {
namespace {

// ONNX spells its default domain both ways.
std::string_view NormalizeDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

std::string OpName(std::string_view domain, std::string_view op_type) {
  return domain.empty() ? std::string(op_type) : StrCat(domain, "::", op_type);
}

}  // namespace

Status KernelRegistry::Register(KernelDef def) {
  def.domain = std::string(NormalizeDomain(def.domain));
  const std::string name = OpName(def.domain, def.op_type);
  ZG_RET_CHECK(def.factory != nullptr, "kernel ", name, " registered without a factory");
  ZG_RET_CHECK(!def.dtypes.empty(), "kernel ", name, " registered for no dtype");
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

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    const Node& node, DeviceType device, std::span<const DataType> input_dtypes, int rank,
    int nranks) const {
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
  KernelInfo info{&node, device, dtype, rank, nranks, entry.host_inputs};
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
