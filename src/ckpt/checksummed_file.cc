#include "checksummed_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "crc32.h"
#include "zerograph/core/io_error.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

// Bytes read and checksummed at a time: small enough that the checksum reads them from the cache
// the read just wrote them to.
constexpr size_t kBlockBytes = size_t{1} << 20;
// The largest page-cache folio on x86-64 (a PMD).
constexpr int64_t kLargestFolio = int64_t{2} << 20;

}  // namespace

StatusOr<std::unique_ptr<ChecksummedFile>> ChecksummedFile::Open(const std::string& path,
                                                                 Reads reads) {
  std::unique_ptr<ChecksummedFile> file(new ChecksummedFile());
  file->path_ = path;
  file->reads_ = reads;
  file->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file->fd_ < 0) return IoError("cannot open", path, errno);
  struct stat info {};
  if (::fstat(file->fd_, &info) != 0) return IoError("cannot stat", path, errno);
  file->size_ = info.st_size;
  // Reads mostly go forward through the file: a larger readahead window. (Announcing each range
  // with POSIX_FADV_WILLNEED instead, without readahead, read fewer bytes but took longer here.)
  ::posix_fadvise(file->fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  return file;
}

ChecksummedFile::~ChecksummedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status ChecksummedFile::ReadChecksummed(int64_t offset, std::span<std::byte> out, uint32_t& crc) {
  while (!out.empty()) {
    const size_t want = std::min(out.size(), kBlockBytes);
    const ssize_t got = ::pread(fd_, out.data(), want, offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot read", path_, errno);
    }
    if (got == 0) {
      return DataLossError(StrCat("'", path_, "' ends at byte ", offset, ", before the ",
                                  out.size(), " bytes wanted from there"));
    }
    const std::span<std::byte> block = out.first(static_cast<size_t>(got));
    crc = Crc32(crc, block);
    if (reads_ == Reads::kOnce) {
      // Drops only whole folios, which reach kLargestFolio: from the one holding the block's
      // first byte (its earlier bytes were read just before, as reading goes forward) to the one
      // holding its end, exclusive. Dropping the block's bytes alone would leave cached every folio
      // that crosses a block boundary: with 1 MiB blocks and 2 MiB folios, nearly all of them.
      const int64_t from = offset & ~(kLargestFolio - 1);
      const int64_t to = (offset + got) & ~(kLargestFolio - 1);
      if (from < to) ::posix_fadvise(fd_, from, to - from, POSIX_FADV_DONTNEED);
    }
    out = out.subspan(block.size());
    offset += got;
  }
  return Status::Ok();
}

Status ChecksummedFile::ReadAt(int64_t offset, std::span<std::byte> out) {
  uint32_t crc = 0;
  ZG_RETURN_IF_ERROR(ReadChecksummed(offset, out, crc));
  if (!checksum_ && !out.empty()) Record(offset, offset + static_cast<int64_t>(out.size()), crc);
  return Status::Ok();
}

void ChecksummedFile::Record(int64_t begin, int64_t end, uint32_t crc) {
  auto next = read_.lower_bound(begin);
  if (next != read_.end() && next->first < end) {
    overlapped_ = true;
    return;
  }
  if (next != read_.begin()) {
    auto previous = std::prev(next);
    if (previous->second.end > begin) {
      overlapped_ = true;
      return;
    }
    if (previous->second.end == begin) {
      // Extend the range before; the usual case, chunks of a piece read in order.
      previous->second.crc = Crc32Combine(previous->second.crc, crc, end - begin);
      previous->second.end = end;
      if (next != read_.end() && next->first == end) {
        previous->second.crc =
            Crc32Combine(previous->second.crc, next->second.crc, next->second.end - end);
        previous->second.end = next->second.end;
        read_.erase(next);
      }
      return;
    }
  }
  if (next != read_.end() && next->first == end) {
    Range merged{next->second.end, Crc32Combine(crc, next->second.crc, next->second.end - end)};
    read_.erase(next);
    read_.emplace(begin, merged);
    return;
  }
  read_.emplace(begin, Range{end, crc});
}

StatusOr<uint32_t> ChecksummedFile::Checksum() {
  if (checksum_) return *checksum_;
  if (overlapped_) read_.clear();
  std::vector<std::byte> buffer;
  uint32_t crc = 0;
  int64_t at = 0;
  // Continues `crc` over the unread bytes [at, end).
  auto read_gap = [&](int64_t end) -> Status {
    while (at < end) {
      buffer.resize(static_cast<size_t>(std::min<int64_t>(end - at, kBlockBytes)));
      ZG_RETURN_IF_ERROR(ReadChecksummed(at, buffer, crc));
      at += static_cast<int64_t>(buffer.size());
    }
    return Status::Ok();
  };
  for (const auto& [begin, range] : read_) {
    ZG_RETURN_IF_ERROR(read_gap(begin));
    crc = Crc32Combine(crc, range.crc, range.end - begin);
    at = range.end;
  }
  ZG_RETURN_IF_ERROR(read_gap(size_));
  read_.clear();
  checksum_ = crc;
  return crc;
}

}  // namespace zerograph
