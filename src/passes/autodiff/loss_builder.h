#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_LOSS_BUILDER_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_LOSS_BUILDER_H_

#include "zerograph/core/status.h"
#include "zerograph/ir/tensor_type.h"
#include "zerograph/passes/autodiff_pass.h"

namespace zerograph {
class Graph;
class Value;
}  // namespace zerograph

namespace zerograph::autodiff {

struct AppendedLoss {
  Value* loss = nullptr;
  Value* label = nullptr;  // the new graph input; null for AutodiffPass::Loss::kOutput
};

// Appends the loss of `options` on `prediction` (whose static type is `type`, symbolic dims
// unknown): its node gets the loss role (forward | 256), the label becomes a graph input. Bad
// options (a label of the wrong dtype or rank, a name already taken) are InvalidArgument.
StatusOr<AppendedLoss> AppendLoss(Graph& graph, Value* prediction, const TensorType& type,
                                  const AutodiffPass::Options& options);

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_LOSS_BUILDER_H_
