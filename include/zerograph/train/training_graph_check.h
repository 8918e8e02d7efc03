#ifndef ZEROGRAPH_TRAIN_TRAINING_GRAPH_CHECK_H_
#define ZEROGRAPH_TRAIN_TRAINING_GRAPH_CHECK_H_

#include "zerograph/core/status.h"
#include "zerograph/runtime/device.h"

namespace zerograph {

class Graph;
namespace runtime {
class KernelRegistry;
}

// Everything that keeps `graph` from training on `device`, found in one pass and reported in one
// error, each problem with what to do: no training metadata (a forward model, or ONNX Runtime's
// training model), parameters that are graph inputs, graph inputs nothing feeds, symbolic
// dimensions that no data file can bind, no optimizer node, and every op without a kernel. A user
// bringing a model fixes them together instead of one per run.
Status CheckTrainingGraph(const Graph& graph, const runtime::KernelRegistry& registry,
                          runtime::DeviceType device);

}  // namespace zerograph

#endif  // ZEROGRAPH_TRAIN_TRAINING_GRAPH_CHECK_H_
