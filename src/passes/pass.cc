#include "zerograph/passes/pass.h"

namespace zerograph {

StatusOr<bool> GraphPass::Run(Graph& graph) {
  StatusOr<bool> changed = RunImpl(graph);
  if (!changed.ok()) return std::move(changed).status().WithContext(StrCat("pass ", name()));
  return changed;
}

}  // namespace zerograph
