#ifndef ZEROGRAPH_SRC_ORT_IMPORT_ORT_CHECKPOINT_H_
#define ZEROGRAPH_SRC_ORT_IMPORT_ORT_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zerograph/core/mapped_file.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph {

// One tensor of an ONNX Runtime checkpoint; `bytes` (ONNX raw layout, as many as dtype and dims
// need) lies in the checkpoint file's mapping.
struct OrtTensor {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  std::span<const std::byte> bytes;
};

// An optimizer group: its update count, its learning rate, and per parameter its states by name
// ("momentum0", "momentum1" for AdamW).
struct OrtOptimizerGroup {
  std::string name;
  int64_t step = 0;
  float initial_learning_rate = 0;
  std::map<std::string, std::map<std::string, OrtTensor>> states;
};

// What zerograph reads of ONNX Runtime's training checkpoint (the flatbuffers `checkpoint` of
// `generate_artifacts` and `CheckpointState.save_checkpoint`).
struct OrtCheckpoint {
  std::shared_ptr<const MappedFile> file;  // holds every tensor's bytes
  std::vector<OrtTensor> trainable;        // the module state's requires_grad parameters
  std::vector<OrtTensor> frozen;           // its frozen parameters
  std::vector<OrtOptimizerGroup> optimizer_groups;
};

// Reads the checkpoint at `path`. The bytes are verified before any is read, so a truncated or
// corrupt file is DataLoss, never a crash; a checkpoint without tensor data (nominal, or with
// external data) is InvalidArgument. Errors name the file.
StatusOr<OrtCheckpoint> ReadOrtCheckpoint(const std::string& path);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_ORT_IMPORT_ORT_CHECKPOINT_H_
