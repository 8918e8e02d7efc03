#include "runtime/kernels/kernel_util.h"

#include <cstring>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {
Status CheckNranksAttribute(const KernelInfo& info) {
  if (!info.node->HasAttribute("nranks")) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(int64_t nranks, ContractInt(*info.node, "nranks"));
  ZG_RETURN_IF_NOT(nranks == info.nranks, "the graph was rewritten for ", nranks,
                   " ranks but runs on ", info.nranks);
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> ReadInt64Values(const DeviceTensor& tensor, std::string_view what) {
  ZG_RETURN_IF_NOT(tensor.dtype() == DataType::kInt64, what, " must be int64, got ",
                   tensor.ToString());
  ZG_RETURN_IF_NOT(tensor.rank() <= 1, what, " must be 1-D, got ", tensor.ToString());
  ZG_RETURN_IF_NOT(tensor.device().host_accessible(), what, " must be readable on the host");
  const int64_t* data = tensor.data_as<const int64_t>();
  return std::vector<int64_t>(data, data + tensor.numel());
}

size_t OptimizerParams(const KernelInfo& info) {
  return *info.contract->optimizer->NumParams(info.node->num_inputs(), info.node->num_outputs());
}

void UpdateInPlace(const OptimizerLayout& layout, std::span<OutputInfo> outputs) {
  const size_t scalars = static_cast<size_t>(layout.num_scalars);
  const size_t n = outputs.size() / (1 + static_cast<size_t>(layout.num_states));
  for (size_t o = 0; o < outputs.size(); ++o) {
    const size_t group = o / n;  // 0: X', k: state k; inputs run X, G, states
    const size_t input_group = group == 0 ? 0 : group + 1;
    outputs[o].in_place_input = static_cast<int>(scalars + input_group * n + o % n);
  }
}

void CopyUnlessSame(const DeviceTensor& src, const DeviceTensor& dst) {
  if (src.data() != dst.data() && dst.byte_size() > 0) {
    std::memcpy(dst.data(), src.data(), dst.byte_size());
  }
}

}  // namespace zerograph::runtime
