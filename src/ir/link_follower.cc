#include "zerograph/ir/link_follower.h"

#include <system_error>
#include <utility>

namespace zerograph {

LinkFollower::LinkFollower(Check check) : check_(std::move(check)) {}

LinkFollower::~LinkFollower() { Stop(); }

void LinkFollower::Linked(std::span<Node* const> nodes, bool parsed_all) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    unchecked_.insert(unchecked_.end(), nodes.begin(), nodes.end());
  }
  if (parsed_all && !started_) Start();
  linked_.notify_all();
}

void LinkFollower::Finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  if (!started_) Start();
  linked_.notify_all();
}

void LinkFollower::Start() {
  started_ = true;
  try {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      CheckUntilDone(lock);
    });
  } catch (const std::system_error&) {
    // No thread: Join checks everything.
  }
}

void LinkFollower::CheckUntilDone(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    linked_.wait(lock, [this] { return !unchecked_.empty() || finished_ || stopped_; });
    if (stopped_ || (unchecked_.empty() && finished_)) return;
    std::vector<const Node*> run;
    run.swap(unchecked_);
    const size_t first = taken_;
    taken_ += run.size();
    // After a failed run nothing later can be the first error.
    const bool failed_before = error_at_ < first;
    lock.unlock();
    Status checked = failed_before ? Status::Ok() : check_(run);
    lock.lock();
    if (!checked.ok() && first < error_at_) {
      error_ = std::move(checked);
      error_at_ = first;
    }
  }
}

void LinkFollower::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  linked_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status LinkFollower::Join() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_ = true;
    linked_.notify_all();
    // What the thread has not taken is checked here, beside its last run: all of it when no
    // thread could be had, the rest when it fell behind (other work took the cores).
    CheckUntilDone(lock);
  }
  if (thread_.joinable()) thread_.join();
  return error_;
}

}  // namespace zerograph
