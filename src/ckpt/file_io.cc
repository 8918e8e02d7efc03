#include "file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "zerograph/core/str_cat.h"

namespace zerograph {

Status IoError(std::string_view what, const std::string& path, int error) {
  std::string message = StrCat(what, " '", path, "': ", std::strerror(error));
  return error == ENOENT ? NotFoundError(std::move(message)) : UnavailableError(std::move(message));
}

Status WriteAll(int fd, const std::string& path, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path, errno);
    }
    bytes = bytes.subspan(static_cast<size_t>(written));
  }
  return Status::Ok();
}

}  // namespace zerograph
