#ifndef ZEROGRAPH_TRAIN_LR_SCHEDULE_H_
#define ZEROGRAPH_TRAIN_LR_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph {

// The learning rate as a pure function of the 0-based step, so resuming at step k continues
// exactly (a checkpoint need only store the step).
struct LrSchedule {
  enum class Kind {
    kConstant,      // lr
    kLinearWarmup,  // Paddle's LinearWarmup(lr, warmup_steps, start_lr, end_lr)
    kCosine,        // linear warmup from start_lr to lr, then cosine decay to min_lr
  };
  Kind kind = Kind::kConstant;
  double lr = 1e-3;
  int64_t warmup_steps = 0;
  double start_lr = 0.0;
  // The rate reached at the end of warmup (LinearWarmup); after warmup LinearWarmup returns `lr`.
  double end_lr = 1e-3;
  // Cosine: steps until min_lr is reached.
  int64_t total_steps = 1;
  double min_lr = 0.0;

  // LinearWarmup: start_lr + (end_lr - start_lr)·step/warmup_steps while step < warmup_steps,
  // then lr. Cosine: the same warmup towards lr, then
  // min_lr + (lr - min_lr)·(1 + cos(π·(step - warmup)/(total - warmup)))/2, and min_lr after.
  float At(int64_t step) const;

  // "constant(lr=0.001)", for logs.
  std::string ToString() const;
};

// "constant", "linear-warmup", "cosine".
StatusOr<LrSchedule::Kind> ParseLrScheduleKind(std::string_view name);

}  // namespace zerograph

#endif  // ZEROGRAPH_TRAIN_LR_SCHEDULE_H_
