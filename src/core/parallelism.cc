#include "core/parallelism.h"

#include <atomic>
#include <mutex>
#include <system_error>
#include <vector>

namespace zerograph {

Status ParallelFor(size_t count, int threads, const std::function<Status(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  Status error;
  auto run = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) &&
                   (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
      Status status = task(i);
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!failed.exchange(true)) error = std::move(status);
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads && static_cast<size_t>(t) < count; ++t) {
    try {
      workers.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the others, and this one, do it all
    }
  }
  run();
  for (std::thread& worker : workers) worker.join();
  return error;
}

}  // namespace zerograph
