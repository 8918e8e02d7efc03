#ifndef ZEROGRAPH_SRC_IR_GRAPH_MEMORY_H_
#define ZEROGRAPH_SRC_IR_GRAPH_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <mutex>
#include <thread>

namespace zerograph {

// Where a graph's region (its nodes, values, names and edge lists) gets its blocks, and what
// faults in their pages ahead of a bulk load.
//
// Why: a first touch of a page costs about 2.4 us in a VM (perf, 2026-12-04). Loading a 1M-node
// graph writes about 500 MB of nodes, values and names on the one thread that links them; their
// 125k first touches were a fifth of that thread's time, the longest part of loading, while the
// parsing thread was done and its core idle. While a load runs (StartWarming to StopWarming), a
// thread of its own faults in the pages of the newest block a window ahead of where the loader
// writes (WriterAt), with MADV_POPULATE_WRITE, which maps pages without writing them and so is
// safe beside the writer. Large blocks are mapped directly, so the pages warmed are the block's.
//
// The window bounds what is faulted in ahead and never written: at most `window` bytes beyond the
// writer, and beyond the end of each block the region leaves for a larger request. It is small:
// the loader reports where it is every few hundred nodes (about 128 KiB), and a 16 MiB window
// raised the peak resident memory of rewriting a 1M-node graph by 14 MB where 256 KiB costs
// nothing measurable and keeps most of the gain (loading 1.53 -> 1.37 s; 1.28 s with 16 MiB).
class GraphMemory final : public std::pmr::memory_resource {
 public:
  static constexpr size_t kDefaultWindow = size_t{256} << 10;
  // Blocks of at least this many bytes are mapped directly; smaller ones come from operator new.
  static constexpr size_t kMappedBlockBytes = size_t{1} << 20;

  explicit GraphMemory(size_t window = kDefaultWindow) : window_(window) {}
  ~GraphMemory() override { StopWarming(); }
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;

  // Starts the warming thread. Returns false, and warms nothing, where no thread can be had or the
  // kernel cannot populate pages (MADV_POPULATE_WRITE is Linux 5.14's).
  bool StartWarming();
  // The writer is at `position` now, in the newest block or about to move into it.
  void WriterAt(const void* position);
  // Stops the warming thread and waits for it. Safe to call when none runs.
  void StopWarming();

 private:
  struct Block {
    uintptr_t begin = 0;
    uintptr_t end = 0;
  };

  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void* pointer, size_t bytes, size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  void Warm();
  Block NewestBlock();

  const size_t window_;
  std::mutex blocks_mutex_;
  Block newest_;  // the newest mapped block, under blocks_mutex_
  std::atomic<uintptr_t> writer_{0};
  // Bumped by WriterAt and StopWarming; the warming thread waits on it.
  std::atomic<uint64_t> signal_{0};
  std::atomic<bool> stopping_{false};
  std::thread warmer_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_IR_GRAPH_MEMORY_H_
