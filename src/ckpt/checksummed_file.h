#ifndef ZEROGRAPH_SRC_CKPT_CHECKSUMMED_FILE_H_
#define ZEROGRAPH_SRC_CKPT_CHECKSUMMED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "zerograph/core/status.h"

namespace zerograph {

// A file read by byte ranges, in any order, whose CRC-32 comes out of the reads themselves: each
// range is checksummed as it is copied, adjacent ranges' checksums are combined, and Checksum()
// reads only the bytes no read covered. Verifying a file that is being copied anyway then costs no
// second pass over it, where checksumming first and copying after reads every byte twice.
class ChecksummedFile {
 public:
  // How the file is read.
  enum class Reads {
    kAny,   // any bytes, any number of times: their pages stay cached
    kOnce,  // each byte once: its pages are dropped after reading, for the next reads to reuse
            // (and so as not to fill the page cache with a whole checkpoint)
  };
  static StatusOr<std::unique_ptr<ChecksummedFile>> Open(const std::string& path, Reads reads);
  ~ChecksummedFile();
  ChecksummedFile(const ChecksummedFile&) = delete;
  ChecksummedFile& operator=(const ChecksummedFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return size_; }

  // Copies bytes [offset, offset + out.size()) of the file into `out`.
  Status ReadAt(int64_t offset, std::span<std::byte> out);
  // The CRC-32 of the whole file: of the bytes read so far, completed by reading the rest. Later
  // reads are not checksummed.
  StatusOr<uint32_t> Checksum();

 private:
  ChecksummedFile() = default;
  Status ReadChecksummed(int64_t offset, std::span<std::byte> out, uint32_t& crc);
  void Record(int64_t begin, int64_t end, uint32_t crc);

  // A range read, [begin, end), with its CRC-32 (keyed by begin in `read_`).
  struct Range {
    int64_t end = 0;
    uint32_t crc = 0;
  };

  std::string path_;
  Reads reads_ = Reads::kAny;
  int fd_ = -1;
  int64_t size_ = 0;
  std::map<int64_t, Range> read_;  // disjoint; touching ranges are merged
  // Set when two reads overlapped: their checksums cannot be combined, so Checksum() reads the
  // whole file again.
  bool overlapped_ = false;
  std::optional<uint32_t> checksum_;  // once computed
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_CKPT_CHECKSUMMED_FILE_H_
