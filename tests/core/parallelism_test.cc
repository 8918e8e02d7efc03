#include "core/parallelism.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

// Every started thread runs the work.
TEST(ParallelismTest, StartsThreads) {
  std::atomic<int> ran{0};
  std::vector<std::thread> workers;
  const size_t started = StartThreads(
      3, [&] { ++ran; }, workers);
  EXPECT_EQ(started, workers.size());
  for (std::thread& worker : workers) worker.join();
  EXPECT_EQ(ran.load(), static_cast<int>(started));
}

// Each index runs once, whatever the threads.
TEST(ParallelismTest, ParallelForRunsEachIndexOnce) {
  std::vector<std::atomic<int>> runs(100);
  ASSERT_TRUE(ParallelFor(runs.size(), 4, [&](size_t i) {
                ++runs[i];
                return Status::Ok();
              }).ok());
  for (const std::atomic<int>& n : runs) EXPECT_EQ(n.load(), 1);
}

// The task runs whether or not a thread was had.
TEST(ParallelismTest, RunOnTheSideReturnsTheResult) {
  EXPECT_EQ(RunOnTheSide([] { return 42; }).get(), 42);
}

}  // namespace
}  // namespace zerograph
