#include "core/parallelism.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <vector>

namespace zerograph {

size_t StartThreads(size_t count, const std::function<void()>& work,
                    std::vector<std::thread>& workers) {
  size_t started = 0;
  for (; started < count; ++started) {
    try {
      workers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had
    }
  }
  return started;
}

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
  // The caller's thread is one of `threads`, and runs whatever the others leave.
  if (count > 1 && threads > 1) {
    StartThreads(std::min(static_cast<size_t>(threads - 1), count - 1), run, workers);
  }
  run();
  for (std::thread& worker : workers) worker.join();
  return error;
}

}  // namespace zerograph
