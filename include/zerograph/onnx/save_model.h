#ifndef ZEROGRAPH_ONNX_SAVE_MODEL_H_
#define ZEROGRAPH_ONNX_SAVE_MODEL_H_

#include <functional>
#include <string>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Writes `graph` as an ONNX model with IR version 8 (so that ONNX 1.12's checker accepts it).
// Initializers that were external stay external, in "<file name>.data" beside the model. The files
// appear complete or not at all: they are written under temporary names and renamed into place.
Status SaveModel(Graph& graph, const std::string& path);

// The same, with `check` run on another thread while the written files are flushed to disk: they
// are put in place only once it succeeds, else its error is returned and nothing is left. `check`
// must only read the graph (rewrite-graph verifies its rewrite this way, hiding the check behind
// the flush).
Status SaveModel(Graph& graph, const std::string& path, const std::function<Status()>& check);

}  // namespace zerograph

#endif  // ZEROGRAPH_ONNX_SAVE_MODEL_H_
