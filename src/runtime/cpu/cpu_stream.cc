#include "runtime/cpu/cpu_stream.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {

uint64_t CpuEvent::State::BeginRecord() {
  std::lock_guard<std::mutex> lock(mutex);
  return ++recorded;
}

void CpuEvent::State::Complete(uint64_t generation) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    completed = std::max(completed, generation);
  }
  completed_cv.notify_all();
}

void CpuEvent::State::WaitFor(uint64_t generation) {
  std::unique_lock<std::mutex> lock(mutex);
  completed_cv.wait(lock, [&] { return completed >= generation; });
}

Status CpuEvent::SynchronizeImpl() {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    generation = state_->recorded;
  }
  state_->WaitFor(generation);
  return Status::Ok();
}

bool CpuEvent::IsCompleteImpl() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->completed >= state_->recorded;
}

CpuStream::CpuStream(Device& device, std::string name) : Stream(device, std::move(name)) {
  worker_ = std::thread([this] { WorkerLoop(); });
  // Named after the stream so profilers and debuggers show which lane is which (15 chars max).
  pthread_setname_np(worker_.native_handle(), this->name().substr(0, 15).c_str());
}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_one();
  worker_.join();
}

void CpuStream::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(item));
    ++pushed_;
  }
  queue_cv_.notify_one();
}

Status CpuStream::EnqueueImpl(Task task) {
  Push(Item{Item::Kind::kTask, std::move(task), nullptr, 0});
  return Status::Ok();
}

Status CpuStream::RecordEventImpl(Event& event) {
  auto& state = static_cast<CpuEvent&>(event).state();
  Push(Item{Item::Kind::kRecord, nullptr, state, state->BeginRecord()});
  return Status::Ok();
}

Status CpuStream::WaitEventImpl(Event& event) {
  auto& state = static_cast<CpuEvent&>(event).state();
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    generation = state->recorded;
  }
  if (generation == 0) return Status::Ok();  // never recorded: nothing to wait for
  Push(Item{Item::Kind::kWait, nullptr, state, generation});
  return Status::Ok();
}

Status CpuStream::SynchronizeImpl() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = pushed_;
  done_cv_.wait(lock, [&] { return finished_ >= target; });
  return error_;
}

void CpuStream::WorkerLoop() {
  for (;;) {
    Item item;
    bool failed;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      queue_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and everything ran
      item = std::move(queue_.front());
      queue_.pop_front();
      failed = !error_.ok();
    }
    switch (item.kind) {
      case Item::Kind::kTask:
        if (!failed) {
          Status status = item.task();
          if (!status.ok()) {
            std::lock_guard<std::mutex> lock(mutex_);
            error_ = std::move(status).WithContext(StrCat("stream '", name(), "'"));
          }
        }
        break;
      case Item::Kind::kRecord:
        item.event->Complete(item.generation);
        break;
      case Item::Kind::kWait:
        // A failed stream drops its work, so it need not wait for anyone.
        if (!failed) item.event->WaitFor(item.generation);
        break;
    }
    item = Item{};  // release the task's captures before reporting it done
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++finished_;
    }
    done_cv_.notify_all();
  }
}

}  // namespace zerograph::runtime
