// Fuzz target: an ONNX model file, through LoadModel (parse, graph build, external data, the
// training metadata and role inference) and Verify, as rewrite-graph and graph-exec read one.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "fuzz_target.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  const std::string path = WriteScratchFile("model.onnx", input);
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(path));
  return Verify(*graph);
}

}  // namespace zerograph::fuzz
