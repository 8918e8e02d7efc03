// The bare round trip's file I/O, shared by graph-io-bench and bare-round-trip: reading a whole
// file, and writing one as SaveModel does (temporary file, fsync, rename). POSIX calls only, so
// that bare-round-trip links nothing of zerograph.
#ifndef ZEROGRAPH_BENCH_BARE_FILE_IO_H_
#define ZEROGRAPH_BENCH_BARE_FILE_IO_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <string>

namespace zerograph::bench {

// Reads all of `path` into `bytes`; false when it cannot be opened or is read short.
inline bool ReadWholeFile(const std::string& path, std::string& bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  bool ok = ::fstat(fd, &info) == 0;
  bytes.resize(ok ? static_cast<size_t>(info.st_size) : 0);
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ::close(fd);
  return ok;
}

// Bytes a write hands the kernel at most, as many as zerograph's writes (AtomicFile), so that
// neither side gets the kernel's slower large-folio path alone: a program writing through a stream
// writes in pieces too. In this VM one write of a whole 218 MB model took 55 ms to 2.1 s (system
// time, inside the copy into the page cache), and a loop writing 236 MB from one buffer took
// 330-430 ms in 1 MiB pieces against 50-57 ms in 256 KiB pieces (2026-12-07); this program
// itself took the same time with either (nine alternating rounds at 1M nodes).
inline constexpr size_t kWritePieceBytes = size_t{256} << 10;

// Writes `bytes` to `path` through `path`.tmp, synced before the rename; false on any failure.
inline bool WriteFileDurably(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  bool ok = true;
  for (size_t done = 0; ok && done < bytes.size();) {
    const size_t piece = std::min(bytes.size() - done, kWritePieceBytes);
    const ssize_t n = ::write(fd, bytes.data() + done, piece);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  return ok && ::rename(temp.c_str(), path.c_str()) == 0;
}

}  // namespace zerograph::bench

#endif  // ZEROGRAPH_BENCH_BARE_FILE_IO_H_
