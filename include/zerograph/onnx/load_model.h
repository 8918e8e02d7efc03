#ifndef ZEROGRAPH_ONNX_LOAD_MODEL_H_
#define ZEROGRAPH_ONNX_LOAD_MODEL_H_

#include <memory>
#include <optional>
#include <string>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {

// Loads an ONNX model (IR version <= 10) into the IR. External data is mapped, never copied, and
// must lie inside the model's folder. A training graph (one with `zerograph.*` metadata) gets its
// metadata checked and, where nodes carry no `__op_role`, roles inferred. Every error names the
// file and the node, value or tensor at fault; bad input is InvalidArgument, NotFound or DataLoss.
struct LoadOptions {
  // Also check the graph before returning it: what Verify checks of a loaded graph, that is each
  // node against its op contract (VerifyContracts; loading itself refuses broken edges, names and
  // order). The check follows the linking, on a thread of its own (LinkFollower), and its error
  // comes after a failed role inference's, as with the check after loading.
  bool verify = false;
  // Where to leave the training spec as loading resolved it to check the metadata or infer roles
  // (names as views, BindingNames::kViewed), or nullopt for a graph without one: a pass that runs
  // first on the graph can take it (ShardingStage1Pass::UseLoadedSpec) rather than read it
  // again, which on a large model takes as long as its own sweep.
  std::optional<ResolvedTrainingSpec>* resolved_spec = nullptr;
};
StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path,
                                           const LoadOptions& options = {});

}  // namespace zerograph

#endif  // ZEROGRAPH_ONNX_LOAD_MODEL_H_
