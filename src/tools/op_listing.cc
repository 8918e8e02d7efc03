#include "zerograph/tools/op_listing.h"

#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {

StatusOr<std::string> ListSupportedOps() {
  KernelRegistry registry;
  ZG_RETURN_IF_ERROR(RegisterCpuKernels(registry));
#if ZG_WITH_CUDA
  ZG_RETURN_IF_ERROR(RegisterCudaKernels(registry));
#endif
  // (domain, op) -> device -> dtypes.
  std::map<std::pair<std::string, std::string>, std::map<DeviceType, std::vector<std::string>>> ops;
  for (const KernelKey& key : registry.Keys()) {
    ops[{key.domain, key.op_type}][key.device].push_back(
        key.dtype == DataType::kUndefined ? "any" : std::string(DataTypeName(key.dtype)));
  }
  std::ostringstream out;
  out << "domain op (opset versions): dtypes per backend\n";
  for (const auto& [op, devices] : ops) {
    const auto& [domain, name] = op;
    std::vector<std::string> versions;
    if (const OpVersions* contracts = OpContracts::Get().FindOp(domain, name)) {
      for (const OpContract& contract : *contracts)
        versions.push_back(StrCat(contract.since_version));
    }
    out << (domain.empty() ? "ai.onnx" : domain) << " " << name << " (" << StrJoin(versions, ", ")
        << ")";
    for (const auto& [device, dtypes] : devices) {
      out << "  " << DeviceTypeName(device) << ": " << StrJoin(dtypes, " ");
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace zerograph::runtime
