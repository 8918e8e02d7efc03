#include "runtime/kernels/broadcast.h"

#include <algorithm>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {

BroadcastPlan PlanBroadcast(std::span<const int64_t> out,
                            std::span<const std::span<const int64_t>> inputs) {
  const size_t rank = out.size();
  // Strides of every operand aligned to the output's dimensions.
  std::vector<Shape> strides;
  for (std::span<const int64_t> in : inputs) {
    Shape s(rank, 0);
    const Shape own = ContiguousStrides(in);
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t d = rank - in.size() + i;
      s[d] = in[i] == 1 ? 0 : own[i];
    }
    strides.push_back(std::move(s));
  }
  return CollapsePlan(out, std::move(strides));
}

BroadcastPlan CollapsePlan(std::span<const int64_t> out, std::vector<Shape> strides) {
  const size_t rank = out.size();
  // Operand 0 is the output, contiguous.
  strides.insert(strides.begin(), ContiguousStrides(out));
  // Drop size-1 dimensions, then merge dimension d into d+1 when every operand steps through
  // them as one (stride[d] == stride[d+1] * dims[d+1]).
  BroadcastPlan plan;
  plan.strides.resize(strides.size());
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    bool merge = !plan.dims.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k) {
      merge = plan.strides[k].back() == strides[k][d] * out[d];
    }
    if (merge) {
      plan.dims.back() *= out[d];
      for (size_t k = 0; k < strides.size(); ++k) plan.strides[k].back() = strides[k][d];
    } else {
      plan.dims.push_back(out[d]);
      for (size_t k = 0; k < strides.size(); ++k) plan.strides[k].push_back(strides[k][d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (auto& s : plan.strides) s.push_back(0);
  }
  // Callers see the inputs only; the output is contiguous.
  plan.strides.erase(plan.strides.begin());
  return plan;
}

}  // namespace zerograph::runtime
