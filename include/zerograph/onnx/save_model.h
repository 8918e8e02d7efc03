#ifndef ZEROGRAPH_ONNX_SAVE_MODEL_H_
#define ZEROGRAPH_ONNX_SAVE_MODEL_H_

#include <string>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Writes `graph` as an ONNX model with IR version 8 (so that ONNX 1.12's checker accepts it).
// Initializers that were external stay external, in "<file name>.data" beside the model. The files
// appear complete or not at all: they are written under temporary names and renamed into place.
Status SaveModel(Graph& graph, const std::string& path);

}  // namespace zerograph

#endif  // ZEROGRAPH_ONNX_SAVE_MODEL_H_
