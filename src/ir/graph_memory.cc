#include "ir/graph_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <system_error>

namespace zerograph {
namespace {

// Pages faulted in per call, so that a stop is seen soon.
constexpr uintptr_t kWarmStep = uintptr_t{2} << 20;

uintptr_t PageSize() {
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

uintptr_t RoundUpToPage(uintptr_t bytes) { return (bytes + PageSize() - 1) & ~(PageSize() - 1); }

bool Mapped(size_t bytes, size_t alignment) {
  return bytes >= GraphMemory::kMappedBlockBytes && alignment <= PageSize();
}

// Whether this kernel populates pages on request.
bool CanPopulate() {
  void* page =
      ::mmap(nullptr, PageSize(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return false;
  const bool populated = ::madvise(page, PageSize(), MADV_POPULATE_WRITE) == 0;
  ::munmap(page, PageSize());
  return populated;
}

}  // namespace

void* GraphMemory::do_allocate(size_t bytes, size_t alignment) {
  if (!Mapped(bytes, alignment)) return ::operator new(bytes, std::align_val_t(alignment));
  void* block = ::mmap(nullptr, RoundUpToPage(bytes), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();
  std::lock_guard<std::mutex> lock(blocks_mutex_);
  newest_ = {reinterpret_cast<uintptr_t>(block), reinterpret_cast<uintptr_t>(block) + bytes};
  return block;
}

void GraphMemory::do_deallocate(void* pointer, size_t bytes, size_t alignment) {
  if (!Mapped(bytes, alignment)) {
    ::operator delete(pointer, std::align_val_t(alignment));
    return;
  }
  // The warming thread must not touch the range once it is unmapped (a mapping made later could
  // reuse it).
  StopWarming();
  ::munmap(pointer, RoundUpToPage(bytes));
}

bool GraphMemory::StartWarming() {
  if (warmer_.joinable()) return true;
  if (!CanPopulate()) return false;
  stopping_.store(false, std::memory_order_relaxed);
  try {
    warmer_ = std::thread([this] { Warm(); });
  } catch (const std::system_error&) {
    return false;
  }
  return true;
}

void GraphMemory::WriterAt(const void* position) {
  writer_.store(reinterpret_cast<uintptr_t>(position), std::memory_order_relaxed);
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_one();
}

void GraphMemory::StopWarming() {
  if (!warmer_.joinable()) return;
  stopping_.store(true, std::memory_order_relaxed);
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_one();
  warmer_.join();
}

GraphMemory::Block GraphMemory::NewestBlock() {
  std::lock_guard<std::mutex> lock(blocks_mutex_);
  return newest_;
}

void GraphMemory::Warm() {
  uint64_t seen_signal = 0;
  Block block;           // the block being warmed
  uintptr_t warmed = 0;  // its pages below this are faulted in
  for (;;) {
    signal_.wait(seen_signal, std::memory_order_acquire);
    seen_signal = signal_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_relaxed)) return;
    const Block newest = NewestBlock();
    if (newest.begin != block.begin) {
      block = newest;
      warmed = block.begin;
    }
    if (block.end == 0) continue;
    // Ahead of the writer in the block, or from the block's start before the writer reaches it.
    const uintptr_t writer = writer_.load(std::memory_order_relaxed);
    const uintptr_t from = writer >= block.begin && writer < block.end ? writer : block.begin;
    const uintptr_t target = std::min(block.end, from + window_) & ~(PageSize() - 1);
    warmed = std::max(warmed, from & ~(PageSize() - 1));
    while (warmed < target && !stopping_.load(std::memory_order_relaxed)) {
      const uintptr_t end = std::min(target, warmed + kWarmStep);
      // A failure only leaves the pages to be faulted in by the writer.
      if (::madvise(reinterpret_cast<void*>(warmed), end - warmed, MADV_POPULATE_WRITE) != 0) {
        return;
      }
      warmed = end;
    }
  }
}

}  // namespace zerograph
