#ifndef ZEROGRAPH_ONNX_SAVE_MODEL_H_
#define ZEROGRAPH_ONNX_SAVE_MODEL_H_

#include <functional>
#include <string>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Writes `graph` as an ONNX model with IR version 8 (so that ONNX 1.12's checker accepts it).
// Initializers that were external stay external, in "<file name>.data" beside the model. The files
// appear complete or not at all: they are written under temporary names and renamed into place.
Status SaveModel(Graph& graph, const std::string& path);

// The same, with `checks` run while the written files are flushed to disk, each on a thread of
// its own: the files are put in place only once every check succeeds, else the first error in
// the order given is returned as the check gave it, and nothing is left. Checks must only read
// the graph (rewrite-graph verifies its rewrite and checks it for hazards this way, behind the
// flush).
Status SaveModel(Graph& graph, const std::string& path,
                 const std::vector<std::function<Status()>>& checks);

}  // namespace zerograph

#endif  // ZEROGRAPH_ONNX_SAVE_MODEL_H_
