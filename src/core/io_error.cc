#include "zerograph/core/io_error.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "zerograph/core/str_cat.h"

namespace zerograph {

Status IoError(std::string_view what, std::string_view path, int error) {
  std::string message = path.empty() ? StrCat(what, ": ", std::strerror(error))
                                     : StrCat(what, " '", path, "': ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(std::move(message));
    case EACCES:
    case EPERM:
    case EISDIR:
    case EROFS:
    case ELOOP:
    case ENAMETOOLONG:
      return InvalidArgumentError(std::move(message));
    default:
      return UnavailableError(std::move(message));
  }
}

}  // namespace zerograph
