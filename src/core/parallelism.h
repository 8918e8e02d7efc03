#ifndef ZEROGRAPH_SRC_CORE_PARALLELISM_H_
#define ZEROGRAPH_SRC_CORE_PARALLELISM_H_

#include <algorithm>
#include <cstddef>
#include <functional>
#include <future>
#include <system_error>
#include <thread>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph {

// Threads worth using for `units` of work when a thread pays for its start from
// `units_per_thread` units: one for small work, up to the cores (at most 8) for large.
inline int ThreadsFor(size_t units, size_t units_per_thread) {
  constexpr size_t kMaxThreads = 8;
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(
      std::clamp<size_t>(units / units_per_thread, 1, std::min(cores, kMaxThreads)));
}

// Appends to `workers` up to `count` threads, each running `work`; fewer, maybe none, when the
// system has no more threads to give. The caller must then do the work left on its own thread, so
// work that shares out tasks (take the next one until none is left) needs nothing else. Returns
// how many started.
size_t StartThreads(size_t count, const std::function<void()>& work,
                    std::vector<std::thread>& workers);

// Runs `task` on a thread of its own, or, where no thread can be had, in the future's get().
template <typename Task>
auto RunOnTheSide(Task task) {
  try {
    return std::async(std::launch::async, task);
  } catch (const std::system_error&) {
    return std::async(std::launch::deferred, task);
  }
}

// Runs `task(i)` for every i in [0, count) on up to `threads` threads, the caller's among them,
// each taking the next i as it finishes one; returns the first error, after which no new i starts.
Status ParallelFor(size_t count, int threads, const std::function<Status(size_t)>& task);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_CORE_PARALLELISM_H_
