#include "zerograph/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "zerograph/core/io_error.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

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
  while (!bytes.empty()) {
    const ssize_t written = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
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
  return Status::Ok();
}

Status AtomicFile::Sync() {
  if (fd_ < 0) return Status::Ok();
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
