#ifndef ZEROGRAPH_ONNX_LOAD_MODEL_H_
#define ZEROGRAPH_ONNX_LOAD_MODEL_H_

#include <memory>
#include <string>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Loads an ONNX model (IR version <= 10) into the IR. External data is mapped, never copied, and
// must lie inside the model's folder. A training graph (one with `zerograph.*` metadata) gets its
// metadata checked and, where nodes carry no `__op_role`, roles inferred. Every error names the
// file and the node, value or tensor at fault; bad input is InvalidArgument, NotFound or DataLoss.
struct LoadOptions {
  // Also check the graph before returning it: what Verify checks of a loaded graph, that is each
  // node against its op contract (VerifyContracts; loading itself refuses broken edges, names and
  // order). The check runs while roles are inferred: both only read the graph until the roles
  // are written.
  bool verify = false;
};
StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path,
                                           const LoadOptions& options = {});

}  // namespace zerograph

#endif  // ZEROGRAPH_ONNX_LOAD_MODEL_H_
