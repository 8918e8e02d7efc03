// GpuTimeline on CUDA: events with timing (the streams' own events have none, which makes them
// cheaper), timed by cudaEventElapsedTime from a reference event the host waited for.

#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_device.h"
#include "zerograph/runtime/cuda.h"

namespace zerograph::runtime {
namespace {

double HostMicroseconds() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class CudaTimeline final : public GpuTimeline {
 public:
  explicit CudaTimeline(CudaDevice& device) : device_(device) {}
  ~CudaTimeline() override {
    device_.MakeCurrent().IgnoreError();
    if (anchor_ != nullptr) cudaEventDestroy(anchor_);
    for (cudaEvent_t event : marks_) cudaEventDestroy(event);
  }

  Status Anchor(Stream& stream) override {
    ZG_RETURN_IF_ERROR(device_.MakeCurrent());
    if (anchor_ == nullptr) ZG_CUDA_CHECK(device_.name(), cudaEventCreate(&anchor_));
    ZG_CUDA_CHECK(device_.name(), cudaEventRecord(anchor_, Native(stream)));
    ZG_CUDA_CHECK(device_.name(), cudaEventSynchronize(anchor_));
    anchor_us_ = HostMicroseconds();
    used_ = 0;
    return Status::Ok();
  }

  StatusOr<size_t> Mark(Stream& stream) override {
    ZG_RET_CHECK(anchor_ != nullptr, "a GPU timeline marked before its first anchor");
    if (used_ == marks_.size()) {
      cudaEvent_t event = nullptr;
      ZG_CUDA_CHECK(device_.name(), cudaEventCreate(&event));
      marks_.push_back(event);
    }
    ZG_CUDA_CHECK(device_.name(), cudaEventRecord(marks_[used_], Native(stream)));
    return used_++;
  }

  StatusOr<std::vector<double>> MarkTimes() override {
    ZG_RETURN_IF_ERROR(device_.MakeCurrent());
    std::vector<double> times(used_);
    for (size_t i = 0; i < used_; ++i) {
      float ms = 0;
      ZG_CUDA_CHECK(device_.name(), cudaEventElapsedTime(&ms, anchor_, marks_[i]));
      times[i] = anchor_us_ + static_cast<double>(ms) * 1e3;
    }
    return times;
  }

 private:
  static cudaStream_t Native(Stream& stream) {
    return static_cast<cudaStream_t>(stream.native_handle());
  }

  CudaDevice& device_;
  cudaEvent_t anchor_ = nullptr;
  double anchor_us_ = 0;
  std::vector<cudaEvent_t> marks_;  // reused every step
  size_t used_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<GpuTimeline>> CudaDevice::CreateTimelineImpl() {
  return std::unique_ptr<GpuTimeline>(new CudaTimeline(*this));
}

}  // namespace zerograph::runtime
