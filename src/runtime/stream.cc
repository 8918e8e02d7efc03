#include "zerograph/runtime/stream.h"

#include <utility>

#include "zerograph/runtime/device.h"

namespace zerograph::runtime {

Status Stream::Enqueue(Task task) {
  ZG_RETURN_IF_NOT(task != nullptr, "null task enqueued on stream '", name_, "'");
  return EnqueueImpl(std::move(task));
}

Status Stream::RecordEvent(Event& event) {
  ZG_RETURN_IF_NOT(&event.device() == device_, "event of ", event.device().name(),
                   " recorded on stream '", name_, "' of ", device_->name());
  return RecordEventImpl(event);
}

Status Stream::WaitEvent(Event& event) {
  ZG_RETURN_IF_NOT(&event.device() == device_, "stream '", name_, "' of ", device_->name(),
                   " waits for an event of ", event.device().name());
  return WaitEventImpl(event);
}

}  // namespace zerograph::runtime
