#ifndef ZEROGRAPH_SRC_ORT_IMPORT_ORT_OPTIMIZER_H_
#define ZEROGRAPH_SRC_ORT_IMPORT_ORT_OPTIMIZER_H_

#include <cstdint>
#include <string>

#include "zerograph/core/status.h"

namespace zerograph {

// The update of ONNX Runtime's optimizer model, as the org.zerograph op that computes it.
struct OrtOptimizer {
  enum class Kind {
    kAdamW,  // com.microsoft AdamWOptimizer -> org.zerograph AdamW
    kSgd,    // com.microsoft SGDOptimizerV2 -> org.zerograph SGD
  };
  Kind kind = Kind::kAdamW;
  // AdamWOptimizer's attributes, with its schema's defaults (alpha and beta are beta1 and beta2).
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.01f;
  int64_t adam_mode = 0;
  int64_t correct_bias = 1;
};

// Reads `optimizer_model.onnx`: one AdamWOptimizer or SGDOptimizerV2 node. Any other optimizer, an
// attribute it does not know or a model that does not parse is an error naming the file.
StatusOr<OrtOptimizer> ReadOrtOptimizer(const std::string& path);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_ORT_IMPORT_ORT_OPTIMIZER_H_
