#ifndef ZEROGRAPH_RUNTIME_STREAM_H_
#define ZEROGRAPH_RUNTIME_STREAM_H_

#include <functional>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph::runtime {

class Device;

// A point in a stream's work that other streams and the host can wait for. Backends implement
// the protected members (CPU: a counter and a condition variable; CUDA: a cudaEvent_t).
class Event {
 public:
  virtual ~Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device& device() const { return *device_; }

  // Blocks the calling thread until the work captured by the latest Stream::RecordEvent is done.
  // Returns at once for an event never recorded.
  Status Synchronize() { return SynchronizeImpl(); }
  // Whether that work is done (true for an event never recorded); never blocks.
  bool IsComplete() const { return IsCompleteImpl(); }

 protected:
  explicit Event(Device& device) : device_(&device) {}
  virtual Status SynchronizeImpl() = 0;
  virtual bool IsCompleteImpl() const = 0;

 private:
  Device* device_;
};

// An ordered queue of work on one device: what is enqueued runs in order; different streams run
// concurrently and are ordered only by events. On CPU a stream is a worker thread, so
// communication on one stream truly overlaps compute on another; on CUDA it is a cudaStream_t.
//
// Errors: a task that fails stops the tasks enqueued after it (they are dropped), but the stream
// keeps completing its events, so a stream waiting on it never hangs. The error is sticky:
// Synchronize() returns it from then on.
class Stream {
 public:
  // Work to run in stream order. On CPU it runs on the stream's worker thread; on CUDA it runs at
  // once on the calling thread and launches device work on native_handle().
  using Task = std::function<Status()>;

  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device& device() const { return *device_; }
  const std::string& name() const { return name_; }

  // Runs `task` after everything enqueued before it. Returns an error only when the task cannot
  // be enqueued; the task's own error is reported by Synchronize().
  Status Enqueue(Task task);
  // Makes `event` complete once everything enqueued so far is done. Re-recording moves the event.
  Status RecordEvent(Event& event);
  // Work enqueued after this call starts only once `event` completes, as recorded at the time of
  // this call (an event never recorded does not hold anything back), as cudaStreamWaitEvent.
  Status WaitEvent(Event& event);
  // Blocks until everything enqueued so far has run; returns the first error of any task.
  Status Synchronize() { return SynchronizeImpl(); }

  // The backend's handle for kernels that launch work themselves: cudaStream_t on CUDA. Optional:
  // null by default (CPU).
  virtual void* native_handle() const { return nullptr; }

 protected:
  Stream(Device& device, std::string name) : device_(&device), name_(std::move(name)) {}
  // Called with a non-null task / an event of this stream's device.
  virtual Status EnqueueImpl(Task task) = 0;
  virtual Status RecordEventImpl(Event& event) = 0;
  virtual Status WaitEventImpl(Event& event) = 0;
  virtual Status SynchronizeImpl() = 0;

 private:
  Device* device_;
  std::string name_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_STREAM_H_
