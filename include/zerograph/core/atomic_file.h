#ifndef ZEROGRAPH_CORE_ATOMIC_FILE_H_
#define ZEROGRAPH_CORE_ATOMIC_FILE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph {

// A file that appears at its path complete and on disk, or not at all: it is written under a
// temporary name in the same folder (".<name>.tmp-<pid>-<n>", so that the rename stays on one file
// system and is atomic), flushed with fsync, renamed into place, and the folder flushed so that the
// rename survives a crash. Until Commit succeeds, destruction removes the temporary and leaves
// whatever was at the path untouched. Errors follow IoError's policy and name the file.
//
// Writes go through Append (a stream, possibly in chunks) or WriteAt (at offsets, from several
// threads at once for disjoint ranges); a caller uses one or the other, and writes each byte once:
// whole pages of zeros are left as holes, which read as zeros in the new file.
class AtomicFile {
 public:
  static StatusOr<std::unique_ptr<AtomicFile>> Create(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // The final path, and the temporary one the bytes go to until Commit.
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  // The temporary's descriptor, for hints such as sync_file_range; -1 after Sync.
  int fd() const { return fd_; }

  // Writes `bytes` after those appended before, retrying short writes and EINTR.
  Status Append(std::span<const std::byte> bytes);
  Status Append(std::string_view text) { return Append(std::as_bytes(std::span(text))); }
  // Writes `bytes` at `offset`. Thread-safe for disjoint ranges.
  Status WriteAt(std::span<const std::byte> bytes, uint64_t offset) const;
  // Sets the file's size (a range written last may end before the file must).
  Status Truncate(uint64_t size);

  // Flushes the bytes to disk and closes the file, sized over a hole left at its end. Commit does
  // it when not done yet; it is apart so that a caller committing several files together can flush
  // all before renaming any.
  Status Sync();
  // Renames the file into place and flushes the folder. An error in flushing the folder comes
  // after the rename: the new file is in place, but may not survive a crash.
  Status Commit();

 private:
  AtomicFile() = default;
  // Writes all of `bytes` at `offset`, zeros included.
  Status Write(std::span<const std::byte> bytes, uint64_t offset) const;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t end_ = 0;  // where Append writes next
  // The end of the furthest hole left; Sync sizes the file over it.
  mutable std::atomic<uint64_t> hole_end_{0};
  bool committed_ = false;
};

// Writes `bytes` to `path` through an AtomicFile.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// Flushes a folder's entries (files created, renamed or removed in it) to disk.
Status SyncFolder(const std::string& folder);

// Renames the folder `from` to `to` (which must not exist, or be an empty folder) and flushes
// their parent folders, so that a folder written in full under a temporary name appears at once.
Status RenameFolder(const std::string& from, const std::string& to);

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_ATOMIC_FILE_H_
