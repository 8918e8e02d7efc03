#ifndef ZEROGRAPH_SRC_RUNTIME_CPU_CPU_STREAM_H_
#define ZEROGRAPH_SRC_RUNTIME_CPU_CPU_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {

// A CPU event counts generations: recording bumps the recorded generation at once and completes it
// when the recording stream's worker reaches that point; a wait blocks a worker until the
// generation it captured is complete. The state is shared with the queued work, so an event may be
// destroyed while a stream still holds a record or wait for it.
class CpuEvent final : public Event {
 public:
  struct State {
    std::mutex mutex;
    std::condition_variable completed_cv;
    uint64_t recorded = 0;
    uint64_t completed = 0;

    uint64_t BeginRecord();
    void Complete(uint64_t generation);
    void WaitFor(uint64_t generation);
  };

  explicit CpuEvent(Device& device) : Event(device), state_(std::make_shared<State>()) {}
  const std::shared_ptr<State>& state() const { return state_; }

 protected:
  Status SynchronizeImpl() override;
  bool IsCompleteImpl() const override;

 private:
  std::shared_ptr<State> state_;
};

// A worker thread that runs the stream's queue in order. Destroying the stream runs what is still
// queued, then joins the thread.
class CpuStream final : public Stream {
 public:
  CpuStream(Device& device, std::string name);
  ~CpuStream() override;

 protected:
  Status EnqueueImpl(Task task) override;
  Status RecordEventImpl(Event& event) override;
  Status WaitEventImpl(Event& event) override;
  Status SynchronizeImpl() override;

 private:
  struct Item {
    enum class Kind { kTask, kRecord, kWait };
    Kind kind;
    Task task;
    std::shared_ptr<CpuEvent::State> event;
    uint64_t generation = 0;
  };

  void Push(Item item);
  void WorkerLoop();

  std::mutex mutex_;
  std::condition_variable queue_cv_;  // work arrived, or stopping
  std::condition_variable done_cv_;   // an item finished
  std::deque<Item> queue_;
  uint64_t pushed_ = 0;    // items ever enqueued
  uint64_t finished_ = 0;  // items ever finished
  bool stopping_ = false;
  Status error_;  // the first task error; later tasks are dropped
  std::thread worker_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_CPU_CPU_STREAM_H_
