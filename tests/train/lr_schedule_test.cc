#include "zerograph/train/lr_schedule.h"

#include <gtest/gtest.h>

namespace zerograph {
namespace {

// Constant is the same at every step.
TEST(LrScheduleTest, Constant) {
  LrSchedule schedule;
  schedule.lr = 0.5;
  EXPECT_EQ(schedule.At(0), 0.5f);
  EXPECT_EQ(schedule.At(1000), 0.5f);
}

// LinearWarmup(lr=1, warmup_steps=4, start_lr=0, end_lr=0.8), as Paddle's: linear from start_lr
// towards end_lr during warmup, then lr.
TEST(LrScheduleTest, LinearWarmupAsPaddle) {
  LrSchedule schedule{LrSchedule::Kind::kLinearWarmup, /*lr=*/1.0, /*warmup_steps=*/4,
                      /*start_lr=*/0.0, /*end_lr=*/0.8};
  EXPECT_FLOAT_EQ(schedule.At(0), 0.0f);
  EXPECT_FLOAT_EQ(schedule.At(1), 0.2f);
  EXPECT_FLOAT_EQ(schedule.At(3), 0.6f);
  EXPECT_FLOAT_EQ(schedule.At(4), 1.0f);
  EXPECT_FLOAT_EQ(schedule.At(50), 1.0f);
}

// Cosine warms up to lr, falls to min_lr at total_steps (half way it is the mean), stays there.
TEST(LrScheduleTest, CosineDecays) {
  LrSchedule schedule{
      LrSchedule::Kind::kCosine, /*lr=*/1.0,     /*warmup_steps=*/2,
      /*start_lr=*/0.0,          /*end_lr=*/1.0, /*total_steps=*/12, /*min_lr=*/0.1};
  EXPECT_FLOAT_EQ(schedule.At(1), 0.5f);
  EXPECT_FLOAT_EQ(schedule.At(2), 1.0f);
  EXPECT_FLOAT_EQ(schedule.At(7), 0.55f);
  EXPECT_FLOAT_EQ(schedule.At(12), 0.1f);
  EXPECT_FLOAT_EQ(schedule.At(100), 0.1f);
  EXPECT_GT(schedule.At(5), schedule.At(6));
}

// Names parse; anything else is refused with the choices named.
TEST(LrScheduleTest, ParsesNames) {
  EXPECT_EQ(*ParseLrScheduleKind("linear-warmup"), LrSchedule::Kind::kLinearWarmup);
  auto bad = ParseLrScheduleKind("step");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("constant, linear-warmup, cosine"), std::string_view::npos);
}

}  // namespace
}  // namespace zerograph
