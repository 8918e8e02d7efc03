#include "core/write_funnel.h"

#include <utility>

namespace zerograph {

Status WriteFunnel::WriteAt(std::span<const std::byte> bytes, uint64_t offset) {
  if (writing_.try_lock()) return WriteHolding(bytes, offset);
  bool left = false;
  {
    std::lock_guard<std::mutex> lock(left_mutex_);
    if (left_bytes_ + bytes.size() <= kMaxLeftBytes) {
      left_.push_back({offset, std::vector<std::byte>(bytes.begin(), bytes.end())});
      left_bytes_ += bytes.size();
      left = true;
    }
  }
  if (!left) {
    writing_.lock();
    return WriteHolding(bytes, offset);
  }
  // The writer may have looked for bytes left before these came, and be gone.
  WriteLeftWhileFree();
  return Status::Ok();
}

Status WriteFunnel::WriteHolding(std::span<const std::byte> bytes, uint64_t offset) {
  Status written = file_.WriteAt(bytes, offset);
  WriteLeft();
  writing_.unlock();
  WriteLeftWhileFree();
  return written;
}

Status WriteFunnel::Finish() {
  {
    std::lock_guard<std::mutex> lock(writing_);
    WriteLeft();
  }
  std::lock_guard<std::mutex> lock(left_mutex_);
  return error_;
}

void WriteFunnel::WriteLeftWhileFree() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(left_mutex_);
      if (left_.empty()) return;
    }
    // Another thread writing writes them (it looks again once it lets go).
    if (!writing_.try_lock()) return;
    WriteLeft();
    writing_.unlock();
  }
}

void WriteFunnel::WriteLeft() {
  for (;;) {
    std::vector<LeftBytes> left;
    {
      std::lock_guard<std::mutex> lock(left_mutex_);
      if (left_.empty()) return;
      left.swap(left_);
      left_bytes_ = 0;
    }
    for (const LeftBytes& piece : left) Keep(file_.WriteAt(piece.bytes, piece.offset));
  }
}

void WriteFunnel::Keep(Status status) {
  if (status.ok()) return;
  std::lock_guard<std::mutex> lock(left_mutex_);
  if (error_.ok()) error_ = std::move(status);
}

}  // namespace zerograph
