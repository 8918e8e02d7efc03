#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_OPTIMIZER_BUILDER_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_OPTIMIZER_BUILDER_H_

#include <span>
#include <utility>
#include <vector>

#include "zerograph/passes/autodiff_pass.h"

namespace zerograph {
class Graph;
class Value;
}  // namespace zerograph

namespace zerograph::autodiff {

struct TrainedParameter {
  Value* param;
  Value* grad;
};

struct AppendedOptimizer {
  Value* lr = nullptr;
  Value* step = nullptr;  // null for SGD
  // (new value, the initializer it replaces), parameters first, then each state in turn.
  std::vector<std::pair<Value*, Value*>> binding;
};

// Appends one multi-tensor optimizer node (role optimizer) over `params`, in their order:
// org.zerograph AdamW (for Adam too, with weight_decay 0) or SGD, with new graph inputs `lr` and
// `step`, zero initializers `<param>.m1` / `<param>.m2` for AdamW's moments, and outputs
// `<name>.new`. Adam's and SGD's weight decay is L2: wd·param added to the gradient by backward
// nodes before the update (PyTorch's Adam and SGD).
AppendedOptimizer AppendOptimizer(Graph& graph, std::span<const TrainedParameter> params,
                                  const AutodiffPass::Options& options);

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_OPTIMIZER_BUILDER_H_
