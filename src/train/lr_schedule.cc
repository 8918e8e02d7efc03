#include "zerograph/train/lr_schedule.h"

#include <cmath>
#include <numbers>

namespace zerograph {

float LrSchedule::At(int64_t step) const {
  switch (kind) {
    case Kind::kConstant:
      return static_cast<float>(lr);
    case Kind::kLinearWarmup:
      if (step < warmup_steps) {
        return static_cast<float>(start_lr + (end_lr - start_lr) * static_cast<double>(step) /
                                                 static_cast<double>(warmup_steps));
      }
      return static_cast<float>(lr);
    case Kind::kCosine: {
      if (step < warmup_steps) {
        return static_cast<float>(start_lr + (lr - start_lr) * static_cast<double>(step) /
                                                 static_cast<double>(warmup_steps));
      }
      if (step >= total_steps) return static_cast<float>(min_lr);
      const double progress = static_cast<double>(step - warmup_steps) /
                              static_cast<double>(std::max<int64_t>(total_steps - warmup_steps, 1));
      return static_cast<float>(min_lr + (lr - min_lr) * 0.5 *
                                             (1.0 + std::cos(std::numbers::pi * progress)));
    }
  }
  return static_cast<float>(lr);
}

std::string LrSchedule::ToString() const {
  switch (kind) {
    case Kind::kConstant:
      return StrCat("constant(lr=", lr, ")");
    case Kind::kLinearWarmup:
      return StrCat("linear-warmup(lr=", lr, ", warmup_steps=", warmup_steps,
                    ", start_lr=", start_lr, ", end_lr=", end_lr, ")");
    case Kind::kCosine:
      return StrCat("cosine(lr=", lr, ", warmup_steps=", warmup_steps,
                    ", total_steps=", total_steps, ", min_lr=", min_lr, ")");
  }
  return "unknown";
}

StatusOr<LrSchedule::Kind> ParseLrScheduleKind(std::string_view name) {
  if (name == "constant") return LrSchedule::Kind::kConstant;
  if (name == "linear-warmup") return LrSchedule::Kind::kLinearWarmup;
  if (name == "cosine") return LrSchedule::Kind::kCosine;
  return InvalidArgumentError(
      StrCat("unknown learning-rate schedule '", name, "' (constant, linear-warmup, cosine)"));
}

}  // namespace zerograph
