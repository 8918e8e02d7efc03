#ifndef ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_STREAM_H_
#define ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_STREAM_H_

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "runtime/cuda/cuda_device.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {

// A cudaEvent_t without timing (recording and waiting are cheaper without it).
class CudaEvent final : public Event {
 public:
  static StatusOr<std::unique_ptr<Event>> Create(CudaDevice& device);
  ~CudaEvent() override;
  cudaEvent_t native() const { return event_; }

 protected:
  Status SynchronizeImpl() override;
  bool IsCompleteImpl() const override;

 private:
  CudaEvent(CudaDevice& device, cudaEvent_t event) : Event(device), cuda_(device), event_(event) {}
  CudaDevice& cuda_;
  cudaEvent_t event_;
};

// A non-blocking cudaStream_t (not ordered with the legacy default stream). A task runs at once on
// the calling thread and launches its work on native_handle(). The first error, of a task or of
// the GPU, is sticky: later tasks are dropped, events are still recorded (so other streams never
// wait for ever) and Synchronize returns it.
class CudaStream final : public Stream {
 public:
  static StatusOr<std::unique_ptr<Stream>> Create(CudaDevice& device, std::string name);
  ~CudaStream() override;
  void* native_handle() const override { return stream_; }

 protected:
  Status EnqueueImpl(Task task) override;
  Status RecordEventImpl(Event& event) override;
  Status WaitEventImpl(Event& event) override;
  Status SynchronizeImpl() override;

 private:
  CudaStream(CudaDevice& device, std::string name, cudaStream_t stream)
      : Stream(device, std::move(name)), cuda_(device), stream_(stream) {}
  std::string Where() const;

  CudaDevice& cuda_;
  cudaStream_t stream_;
  Status error_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_CUDA_CUDA_STREAM_H_
