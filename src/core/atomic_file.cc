#include "zerograph/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "zerograph/core/io_error.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

// Whole pages of zeros are left unwritten. The file is new, so a hole reads as zeros, and it costs
// neither page cache nor disk: a rewritten graph's zeroed optimizer states are hundreds of MB at a
// million parameters, and filling page cache costs more than serializing the bytes.
constexpr uint64_t kHolePageBytes = 4096;

// Bytes one write hands the kernel at most. The kernel sizes the page cache's folios by the write
// (Linux 6.x: up to the write's length), and large folios come from the page allocator's
// high-order blocks, slow to get in a VM: one 27 MB write took 11-115 ms, where 256 KiB writes
// took 13-26 ms.
constexpr size_t kMaxWriteBytes = size_t{256} << 10;

bool IsZeroPage(const std::byte* page) {
  // Blocks of 64 bytes, so that the compiler vectorizes the OR and data stops at its first block.
  for (size_t block = 0; block < kHolePageBytes; block += 64) {
    uint64_t any = 0;
    for (size_t i = 0; i < 64; i += 8) {
      uint64_t word;
      std::memcpy(&word, page + block + i, sizeof word);
      any |= word;
    }
    if (any != 0) return false;
  }
  return true;
}

// The folder holding `path`, "." for a bare file name.
std::string FolderOf(const std::string& path) {
  const std::string folder = fs::path(path).parent_path().string();
  return folder.empty() ? "." : folder;
}

}  // namespace

StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(std::string path) {
  // The pid keeps two processes apart, the counter two files of one process.
  static std::atomic<uint64_t> counter{0};
  std::unique_ptr<AtomicFile> file(new AtomicFile());
  const fs::path destination(path);
  file->temp_path_ =
      (destination.parent_path() / StrCat(".", destination.filename().string(), ".tmp-", ::getpid(),
                                          "-", counter.fetch_add(1, std::memory_order_relaxed)))
          .string();
  file->path_ = std::move(path);
  file->fd_ = ::open(file->temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (file->fd_ < 0) return IoError("cannot create", file->temp_path_, errno);
  return file;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

Status AtomicFile::Append(std::span<const std::byte> bytes) {
  ZG_RETURN_IF_ERROR(WriteAt(bytes, end_));
  end_ += bytes.size();
  return Status::Ok();
}

Status AtomicFile::WriteAt(std::span<const std::byte> bytes, uint64_t offset) const {
  // The pages of the file that `bytes` covers whole, from the first page boundary in it.
  size_t page = static_cast<size_t>((kHolePageBytes - offset % kHolePageBytes) % kHolePageBytes);
  size_t unwritten = 0;  // where the bytes not written yet start
  while (page + kHolePageBytes <= bytes.size()) {
    if (!IsZeroPage(bytes.data() + page)) {
      page += kHolePageBytes;
      continue;
    }
    size_t zeros_end = page + kHolePageBytes;
    while (zeros_end + kHolePageBytes <= bytes.size() && IsZeroPage(bytes.data() + zeros_end)) {
      zeros_end += kHolePageBytes;
    }
    ZG_RETURN_IF_ERROR(Write(bytes.subspan(unwritten, page - unwritten), offset + unwritten));
    uint64_t end = hole_end_.load(std::memory_order_relaxed);
    while (offset + zeros_end > end &&
           !hole_end_.compare_exchange_weak(end, offset + zeros_end, std::memory_order_relaxed)) {
    }
    unwritten = page = zeros_end;
  }
  return Write(bytes.subspan(unwritten), offset + unwritten);
}

Status AtomicFile::Write(std::span<const std::byte> bytes, uint64_t offset) const {
  while (!bytes.empty()) {
    const ssize_t written = ::pwrite(fd_, bytes.data(), std::min(bytes.size(), kMaxWriteBytes),
                                     static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", temp_path_, errno);
    }
    bytes = bytes.subspan(static_cast<size_t>(written));
    offset += static_cast<uint64_t>(written);
  }
  return Status::Ok();
}

Status AtomicFile::Truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    return IoError("cannot size", temp_path_, errno);
  }
  hole_end_.store(0, std::memory_order_relaxed);  // the size covers the holes before it
  return Status::Ok();
}

Status AtomicFile::Sync() {
  if (fd_ < 0) return Status::Ok();
  // A hole at the end is not in the file's size until the file is sized over it.
  if (const uint64_t hole_end = hole_end_.load(std::memory_order_relaxed); hole_end > 0) {
    struct stat status;
    if (::fstat(fd_, &status) != 0) return IoError("cannot size", temp_path_, errno);
    if (static_cast<uint64_t>(status.st_size) < hole_end) ZG_RETURN_IF_ERROR(Truncate(hole_end));
  }
  if (::fsync(fd_) != 0) return IoError("cannot flush", temp_path_, errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return IoError("cannot close", temp_path_, errno);
  return Status::Ok();
}

Status AtomicFile::Commit() {
  ZG_RETURN_IF_ERROR(Sync());
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return IoError(StrCat("cannot rename '", temp_path_, "' to"), path_, errno);
  }
  committed_ = true;
  return SyncFolder(FolderOf(path_));
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path));
  ZG_RETURN_IF_ERROR(file->Append(bytes));
  return file->Commit();
}

Status SyncFolder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open the folder", folder, errno);
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) return IoError("cannot flush the folder", folder, error);
  return Status::Ok();
}

Status RenameFolder(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return IoError(StrCat("cannot rename '", from, "' to"), to, errno);
  }
  const std::string from_parent = FolderOf(from), to_parent = FolderOf(to);
  ZG_RETURN_IF_ERROR(SyncFolder(to_parent));
  if (from_parent != to_parent) ZG_RETURN_IF_ERROR(SyncFolder(from_parent));
  return Status::Ok();
}

}  // namespace zerograph
