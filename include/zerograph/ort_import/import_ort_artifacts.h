#ifndef ZEROGRAPH_ORT_IMPORT_IMPORT_ORT_ARTIFACTS_H_
#define ZEROGRAPH_ORT_IMPORT_IMPORT_ORT_ARTIFACTS_H_

#include <memory>
#include <string>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Reads the training artifacts ONNX Runtime's `generate_artifacts` writes into `dir`
// (training_model.onnx, optimizer_model.onnx, the flatbuffers `checkpoint`) and returns the same
// training step as a training graph (docs/formats.md), so every pass and the executor take it:
//   - the training model's parameter inputs become initializers holding the checkpoint's values;
//   - its gradient accumulation goes: InPlaceAccumulatorV2(<p>_grad.accumulation.buffer, <p>_grad,
//     lazy_reset_grad) is dropped with the buffers and the flag, and <p>_grad feeds the optimizer;
//   - the optimizer model's AdamWOptimizer (every attribute) becomes one org.zerograph AdamW over
//     all parameters, its states <p>.m1 / <p>.m2 initialized from the checkpoint's optimizer
//     states when it has them, else zero, and its step continuing the checkpoint's update count;
//     SGDOptimizerV2 becomes org.zerograph SGD;
//   - roles are explicit: the loss and its ancestors forward (first in the schedule), the loss
//     node marked, the optimizer last, the rest backward.
// Anything it cannot map (another optimizer, another accumulation pattern, a checkpoint of another
// model, a missing or corrupt file) is an error naming the file and the cause.
StatusOr<std::unique_ptr<Graph>> ImportOrtArtifacts(const std::string& dir);

}  // namespace zerograph

#endif  // ZEROGRAPH_ORT_IMPORT_IMPORT_ORT_ARTIFACTS_H_
