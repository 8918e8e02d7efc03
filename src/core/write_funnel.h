#ifndef ZEROGRAPH_SRC_CORE_WRITE_FUNNEL_H_
#define ZEROGRAPH_SRC_CORE_WRITE_FUNNEL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "zerograph/core/atomic_file.h"
#include "zerograph/core/status.h"

namespace zerograph {

// Positional writes into one file from several threads, made by one thread at a time: a thread
// that finds another writing leaves a copy of its bytes to the writer and goes back to its own
// work, unless the copies would pass kMaxLeftBytes (a large piece, such as a tensor's bytes
// handed over uncopied): then it waits for the writer, asleep, and writes the piece itself.
//
// Why: the kernel takes the file's lock for every write (ext4: the inode's rwsem, held while the
// bytes are copied into the page cache), and a thread that waits for it spins on its core while
// the owner runs. Two threads serializing a large model into one file spent an eighth of their
// time there; a copy of the bytes costs a fraction of the write it waits for.
class WriteFunnel {
 public:
  explicit WriteFunnel(const AtomicFile& file) : file_(file) {}
  WriteFunnel(const WriteFunnel&) = delete;
  WriteFunnel& operator=(const WriteFunnel&) = delete;

  // Writes `bytes` at `offset` (ranges must not overlap), now or, copied, by the thread writing
  // when it is done. Thread-safe. An error of a write left to another thread comes from Finish.
  Status WriteAt(std::span<const std::byte> bytes, uint64_t offset);
  // Once no WriteAt runs: writes what is left and returns the first error of any write.
  Status Finish();

  // The most bytes left to the writer at once: the memory the copies may take.
  static constexpr size_t kMaxLeftBytes = size_t{256} << 10;

 private:
  struct LeftBytes {
    uint64_t offset;
    std::vector<std::byte> bytes;
  };

  // With `writing_` held: writes `bytes`, then what is left, and lets go.
  Status WriteHolding(std::span<const std::byte> bytes, uint64_t offset);
  // While some bytes are left and no thread writes, writes them.
  void WriteLeftWhileFree();
  // With `writing_` held: writes the bytes left until none are; keeps the first error.
  void WriteLeft();
  void Keep(Status status);

  const AtomicFile& file_;
  std::mutex writing_;     // held by the thread writing
  std::mutex left_mutex_;  // guards what follows
  std::vector<LeftBytes> left_;
  size_t left_bytes_ = 0;  // in left_
  Status error_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_CORE_WRITE_FUNNEL_H_
