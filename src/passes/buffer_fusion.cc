#include "passes/buffer_fusion.h"

#include "core/parallelism.h"
#include "zerograph/ir/float_convert.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/tensor.h"

namespace zerograph {

BufferFusion::~BufferFusion() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing_ = true;
    dropping_ = true;
  }
  added_.notify_one();
  for (std::thread& worker : workers_) worker.join();
}

void BufferFusion::Add(Value* target, std::vector<const Tensor*> sources,
                       std::vector<int64_t> offsets, int64_t total, DataType dtype) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back({target, std::move(sources), std::move(offsets), total, dtype, {}, {}});
  }
  if (std::thread::hardware_concurrency() < 2) {
    Job& job = jobs_.back();
    job.status = Fuse(job);
    ++next_;
    return;
  }
  // Where no thread can be had, Finish fills the buffers.
  if (workers_.empty())
    StartThreads(
        1, [this] { Work(); }, workers_);
  added_.notify_one();
}

Status BufferFusion::Fuse(Job& job) {
  const size_t element_size = ElementSize(job.dtype);
  const size_t size = static_cast<size_t>(job.total) * element_size;
  job.bytes.reserve(size);
  std::string converted;
  for (size_t i = 0; i < job.sources.size(); ++i) {
    ZG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, job.sources[i]->Bytes());
    if (job.sources[i]->dtype() != job.dtype) {
      ZG_ASSIGN_OR_RETURN(converted,
                          ConvertFloatElements(bytes, job.sources[i]->dtype(), job.dtype));
      bytes = std::as_bytes(std::span(converted));
    }
    const size_t at = static_cast<size_t>(job.offsets[i]) * element_size;
    ZG_RET_CHECK(at >= job.bytes.size() && at + bytes.size() <= size, "tensor '",
                 job.sources[i]->name(), "' does not fit its place in the fused buffer");
    job.bytes.append(at - job.bytes.size(), '\0');
    job.bytes.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  job.bytes.append(size - job.bytes.size(), '\0');
  return Status::Ok();
}

void BufferFusion::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    added_.wait(lock, [&] { return next_ < jobs_.size() || finishing_; });
    if (next_ == jobs_.size() || dropping_) return;
    // Jobs only grow at the back: this one stays where it is while the lock is released.
    Job& job = jobs_[next_];
    lock.unlock();
    job.status = Fuse(job);
    lock.lock();
    ++next_;
  }
}

Status BufferFusion::Finish(Graph& graph) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing_ = true;
  }
  added_.notify_one();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  for (; next_ < jobs_.size(); ++next_) jobs_[next_].status = Fuse(jobs_[next_]);
  for (Job& job : jobs_) {
    ZG_RETURN_IF_ERROR(job.status);
    ZG_RETURN_IF_ERROR(graph.SetInitializerBytes(job.target, std::move(job.bytes)));
  }
  jobs_.clear();
  return Status::Ok();
}

}  // namespace zerograph
