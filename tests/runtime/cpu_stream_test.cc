#include <atomic>
#include <barrier>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {
namespace {

class CpuStreamTest : public ::testing::Test {
 protected:
  std::unique_ptr<Stream> NewStream(const char* name) {
    return std::move(device_->CreateStream(name)).value();
  }
  std::unique_ptr<Event> NewEvent() { return std::move(device_->CreateEvent()).value(); }

  std::unique_ptr<Device> device_ = CreateCpuDevice();
};

// Tasks of one stream run in order, on one thread that is not the caller's.
TEST_F(CpuStreamTest, TasksRunInOrderOnTheWorkerThread) {
  auto stream = NewStream("compute");
  std::vector<int> order;
  std::thread::id worker;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(stream
                    ->Enqueue([&, i] {
                      order.push_back(i);
                      worker = std::this_thread::get_id();
                      return Status::Ok();
                    })
                    .ok());
  }
  ASSERT_TRUE(stream->Synchronize().ok());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_NE(worker, std::this_thread::get_id());
}

// Two streams run at the same time: each task waits at a barrier only the other can complete,
// which would deadlock if they shared a thread.
TEST_F(CpuStreamTest, TwoStreamsRunConcurrently) {
  auto compute = NewStream("compute");
  auto comm = NewStream("comm");
  std::barrier meet(2);
  auto task = [&] {
    meet.arrive_and_wait();
    return Status::Ok();
  };
  ASSERT_TRUE(compute->Enqueue(task).ok());
  ASSERT_TRUE(comm->Enqueue(task).ok());
  EXPECT_TRUE(compute->Synchronize().ok());
  EXPECT_TRUE(comm->Synchronize().ok());
}

// A consumer on stream B that waits for an event recorded after a producer on stream A sees all
// the producer wrote, although B reached the wait while A was still blocked before producing.
TEST_F(CpuStreamTest, WaitEventOrdersConsumerAfterProducer) {
  auto a = NewStream("a");
  auto b = NewStream("b");
  auto produced = NewEvent();
  for (int round = 0; round < 20; ++round) {
    std::vector<int> data(1 << 16, 0);
    std::latch b_reached_wait(1);
    std::atomic<bool> consumer_saw_all{false};
    // A: wait until B is at its wait, then write everything.
    ASSERT_TRUE(a->Enqueue([&] {
                   b_reached_wait.wait();
                   for (int& v : data) v = round + 1;
                   return Status::Ok();
                 }).ok());
    ASSERT_TRUE(a->RecordEvent(*produced).ok());
    ASSERT_TRUE(b->Enqueue([&] {
                   b_reached_wait.count_down();
                   return Status::Ok();
                 }).ok());
    ASSERT_TRUE(b->WaitEvent(*produced).ok());
    ASSERT_TRUE(b->Enqueue([&] {
                   bool all = true;
                   for (int v : data) all &= v == round + 1;
                   consumer_saw_all = all;
                   return Status::Ok();
                 }).ok());
    ASSERT_TRUE(b->Synchronize().ok());
    EXPECT_TRUE(consumer_saw_all) << "round " << round;
    EXPECT_TRUE(produced->IsComplete());
  }
}

// The host can wait for an event; an event never recorded is complete and does not block.
TEST_F(CpuStreamTest, EventSynchronizeWaitsForRecordedWork) {
  auto event = NewEvent();
  EXPECT_TRUE(event->IsComplete());
  EXPECT_TRUE(event->Synchronize().ok());
  auto stream = NewStream("s");
  std::latch release(1);
  std::atomic<bool> done{false};
  ASSERT_TRUE(stream
                  ->Enqueue([&] {
                    release.wait();
                    done = true;
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_TRUE(stream->RecordEvent(*event).ok());
  EXPECT_FALSE(event->IsComplete());  // the task is held by the latch
  release.count_down();
  ASSERT_TRUE(event->Synchronize().ok());
  EXPECT_TRUE(done);
  // A stream waiting for a never-recorded event runs on.
  auto fresh = NewEvent();
  ASSERT_TRUE(stream->WaitEvent(*fresh).ok());
  EXPECT_TRUE(stream->Synchronize().ok());
}

// A failing task's error comes back from Synchronize, later tasks are dropped, and the stream
// still completes its events so a stream waiting on it does not hang.
TEST_F(CpuStreamTest, FailedTaskStopsTheStreamButCompletesEvents) {
  auto a = NewStream("a");
  auto b = NewStream("b");
  auto event = NewEvent();
  bool ran_after_error = false;
  ASSERT_TRUE(a->Enqueue([] { return InternalError("kernel exploded"); }).ok());
  ASSERT_TRUE(a->Enqueue([&] {
                 ran_after_error = true;
                 return Status::Ok();
               }).ok());
  ASSERT_TRUE(a->RecordEvent(*event).ok());
  ASSERT_TRUE(b->WaitEvent(*event).ok());
  EXPECT_TRUE(b->Synchronize().ok());
  Status status = a->Synchronize();
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("stream 'a'"), std::string_view::npos) << status.ToString();
  EXPECT_NE(status.message().find("kernel exploded"), std::string_view::npos);
  EXPECT_FALSE(ran_after_error);
  EXPECT_FALSE(a->Synchronize().ok());  // sticky
}

// Destroying a stream runs what is still queued.
TEST_F(CpuStreamTest, DestructionDrainsTheQueue) {
  std::atomic<int> ran{0};
  {
    auto stream = NewStream("s");
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(stream
                      ->Enqueue([&] {
                        ++ran;
                        return Status::Ok();
                      })
                      .ok());
    }
  }
  EXPECT_EQ(ran, 10);
}

// An asynchronous host copy happens in stream order.
TEST_F(CpuStreamTest, AsyncCopyRunsInStreamOrder) {
  auto stream = NewStream("s");
  DeviceTensor t = *DeviceTensor::Allocate(*device_, DataType::kFloat32, {4});
  std::vector<float> host = {1, 2, 3, 4};
  std::vector<float> back(4, 0);
  ASSERT_TRUE(device_->CopyFromHostAsync(std::as_bytes(std::span(host)), t, *stream).ok());
  ASSERT_TRUE(device_->CopyToHostAsync(t, std::as_writable_bytes(std::span(back)), *stream).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(back, host);
}

// Events of another device are refused.
TEST_F(CpuStreamTest, EventOfAnotherDeviceIsRefused) {
  auto other = CreateCpuDevice();
  auto event = std::move(other->CreateEvent()).value();
  auto stream = NewStream("s");
  EXPECT_FALSE(stream->RecordEvent(*event).ok());
  EXPECT_FALSE(stream->WaitEvent(*event).ok());
}

}  // namespace
}  // namespace zerograph::runtime
