#include "zerograph/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "zerograph/core/io_error.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {

StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::string& path, Pages pages) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open", path, errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return IoError("cannot stat", path, error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(StrCat("'", path, "' is not a regular file"));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(info.st_size);
  if (file->size_ > 0) {  // mmap refuses a length of 0
    const int flags = MAP_PRIVATE | (pages == Pages::kUpFront ? MAP_POPULATE : 0);
    void* data = ::mmap(nullptr, file->size_, PROT_READ, flags, fd, 0);
    if (data == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return IoError("cannot map", path, error);
    }
    file->data_ = static_cast<const std::byte*>(data);
  }
  ::close(fd);  // the mapping keeps the file open
  return std::shared_ptr<const MappedFile>(std::move(file));
}

void MappedFile::Evict(std::span<const std::byte> range) const {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(range.data()) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(range.data()) + range.size()) & ~(page - 1);
  if (range.data() < data_ || range.data() + range.size() > data_ + size_ || begin >= end) return;
  // The mapping is private and never written, so dropping a page loses nothing.
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace zerograph
