#include "runtime/cuda/cuda_stream.h"

#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {

StatusOr<std::unique_ptr<Event>> CudaEvent::Create(CudaDevice& device) {
  ZG_RETURN_IF_ERROR(device.MakeCurrent());
  cudaEvent_t event = nullptr;
  ZG_CUDA_CHECK(device.name(), cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return std::unique_ptr<Event>(new CudaEvent(device, event));
}

CudaEvent::~CudaEvent() {
  // A stream may still hold a record or wait of it: CUDA releases it once that work is done.
  cuda_.MakeCurrent().IgnoreError();
  cudaEventDestroy(event_);
}

Status CudaEvent::SynchronizeImpl() {
  ZG_RETURN_IF_ERROR(cuda_.MakeCurrent());
  return cuda_.WaitFor([this] { return cudaEventQuery(event_); },
                       [this] { return cudaEventSynchronize(event_); }, "an event");
}

bool CudaEvent::IsCompleteImpl() const {
  if (!cuda_.MakeCurrent().ok()) return true;
  // A failed query means the GPU failed: the error surfaces from the streams, and nothing is
  // left to wait for.
  const cudaError_t result = cudaEventQuery(event_);
  if (result != cudaSuccess && result != cudaErrorNotReady) cudaGetLastError();
  return result != cudaErrorNotReady;
}

StatusOr<std::unique_ptr<Stream>> CudaStream::Create(CudaDevice& device, std::string name) {
  ZG_RETURN_IF_ERROR(device.MakeCurrent());
  cudaStream_t stream = nullptr;
  ZG_CUDA_CHECK(StrCat(device.name(), " stream '", name, "'"),
                cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  device.AddStream(stream);
  return std::unique_ptr<Stream>(new CudaStream(device, std::move(name), stream));
}

CudaStream::~CudaStream() {
  cuda_.MakeCurrent().IgnoreError();
  cuda_.RemoveStream(stream_);
  // Work still queued completes; CUDA frees the stream after it.
  cudaStreamDestroy(stream_);
}

std::string CudaStream::Where() const { return StrCat(device().name(), " stream '", name(), "'"); }

Status CudaStream::EnqueueImpl(Task task) {
  if (!error_.ok()) return Status::Ok();  // dropped; Synchronize reports the error
  ZG_RETURN_IF_ERROR(cuda_.MakeCurrent());
  // A kernel launch that failed (a bad launch configuration) says so only in cudaGetLastError:
  // clear what calls before the task left there, then look after it. "Not ready" is the answer of
  // a query (the allocator's event polls), not a failure.
  cudaGetLastError();
  Status status = task();
  const cudaError_t launch = cudaGetLastError();
  if (status.ok() && launch != cudaSuccess && launch != cudaErrorNotReady) {
    status = CudaStatus(launch, Where(), "a kernel launch of the task");
  }
  if (!status.ok()) error_ = std::move(status);
  return Status::Ok();
}

Status CudaStream::RecordEventImpl(Event& event) {
  ZG_RETURN_IF_ERROR(cuda_.MakeCurrent());
  ZG_CUDA_CHECK(Where(), cudaEventRecord(static_cast<CudaEvent&>(event).native(), stream_));
  return Status::Ok();
}

Status CudaStream::WaitEventImpl(Event& event) {
  ZG_RETURN_IF_ERROR(cuda_.MakeCurrent());
  ZG_CUDA_CHECK(Where(), cudaStreamWaitEvent(stream_, static_cast<CudaEvent&>(event).native(), 0));
  return Status::Ok();
}

Status CudaStream::SynchronizeImpl() {
  ZG_RETURN_IF_ERROR(cuda_.MakeCurrent());
  Status waited = cuda_.WaitFor([this] { return cudaStreamQuery(stream_); },
                                [this] { return cudaStreamSynchronize(stream_); },
                                StrCat("stream '", name(), "'"));
  if (error_.ok() && !waited.ok()) error_ = std::move(waited);
  return error_;
}

}  // namespace zerograph::runtime
