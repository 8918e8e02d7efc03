#ifndef ZEROGRAPH_CORE_IO_ERROR_H_
#define ZEROGRAPH_CORE_IO_ERROR_H_

#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph {

// The status of a failed system call on a file: "<what> '<path>': <strerror(error)>", or
// "<what>: <strerror(error)>" when `path` is empty (the caller's context names the file).
//
// One policy for every file the tools open or write, since every path is one the user named (or
// one beside it): what the user can fix by naming another path or changing its permissions is bad
// input (exit 2), what the machine did is a runtime failure (exit 3).
//   ENOENT, ENOTDIR                                   -> NotFound
//   EACCES, EPERM, EISDIR, EROFS, ELOOP, ENAMETOOLONG -> InvalidArgument
//   anything else (ENOSPC, EDQUOT, EIO, EMFILE, ...)  -> Unavailable
Status IoError(std::string_view what, std::string_view path, int error);

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_IO_ERROR_H_
