// Fuzz target: ONNX Runtime's flatbuffers training checkpoint, through ReadOrtCheckpoint
// (rewrite-graph --from-ort); every tensor it accepts is read to its last byte.
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "fuzz_target.h"
#include "ort_import/ort_checkpoint.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  const std::string path = WriteScratchFile("checkpoint", input);
  ZG_ASSIGN_OR_RETURN(OrtCheckpoint checkpoint, ReadOrtCheckpoint(path));
  for (const OrtTensor& tensor : checkpoint.trainable) TouchBytes(tensor.bytes);
  for (const OrtTensor& tensor : checkpoint.frozen) TouchBytes(tensor.bytes);
  for (const OrtOptimizerGroup& group : checkpoint.optimizer_groups) {
    for (const auto& [param, states] : group.states) {
      for (const auto& [state, tensor] : states) TouchBytes(tensor.bytes);
    }
  }
  return Status();
}

}  // namespace zerograph::fuzz
