#ifndef ZEROGRAPH_CORE_MAPPED_FILE_H_
#define ZEROGRAPH_CORE_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "zerograph/core/status.h"

namespace zerograph {

// A read-only memory mapping of a whole file, shared (through shared_ptr) by everything that points
// into it: a model's graph, the tensors of an external data file, a safetensors file. Mapping
// costs no copy, and pages the reader never touches are never read.
class MappedFile {
 public:
  // When the pages are read in.
  enum class Pages {
    kOnFirstTouch,  // fault by fault: for files of which a reader may touch only a part
    kUpFront,       // all at once (MAP_POPULATE): cheaper for a file read whole, such as a model
  };

  // Maps `path`; an empty file maps to an empty span. Errors follow IoError's policy; a path that
  // is not a regular file is InvalidArgument.
  static StatusOr<std::shared_ptr<const MappedFile>> Open(const std::string& path,
                                                          Pages pages = Pages::kOnFirstTouch);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

  // Drops the pages wholly inside `range` (a part of bytes()) from the process's memory, for a
  // reader done with them: the bytes stay what they were, and reading them again reads them from
  // the file (or the page cache) anew. Thread-safe.
  void Evict(std::span<const std::byte> range) const;

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_MAPPED_FILE_H_
