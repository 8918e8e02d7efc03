#ifndef ZEROGRAPH_SRC_CKPT_FILE_IO_H_
#define ZEROGRAPH_SRC_CKPT_FILE_IO_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph {

// "<what> '<path>': <strerror(error)>", NotFound for ENOENT (a missing file is bad input), else
// Unavailable (the file system failed).
Status IoError(std::string_view what, const std::string& path, int error);

// Writes all of `bytes` to `fd` (the file at `path`, for messages), retrying short writes and
// EINTR.
Status WriteAll(int fd, const std::string& path, std::span<const std::byte> bytes);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_CKPT_FILE_IO_H_
