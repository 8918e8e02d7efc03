#ifndef ZEROGRAPH_SRC_CORE_PARALLELISM_H_
#define ZEROGRAPH_SRC_CORE_PARALLELISM_H_

#include <algorithm>
#include <cstddef>
#include <functional>
#include <thread>

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

// Runs `task(i)` for every i in [0, count) on up to `threads` threads, the caller's among them,
// each taking the next i as it finishes one; returns the first error, after which no new i starts.
Status ParallelFor(size_t count, int threads, const std::function<Status(size_t)>& task);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_CORE_PARALLELISM_H_
