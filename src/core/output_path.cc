#include "zerograph/core/output_path.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

// The folder an output is written into must exist and take new entries.
Status CheckWritableFolder(std::string_view option, const std::string& path,
                           const fs::path& folder) {
  std::error_code error;
  const fs::file_status status = fs::status(folder, error);
  const std::string where = StrCat(option, " '", path, "': ");
  if (!fs::exists(status)) {
    return InvalidArgumentError(
        StrCat(where, "folder '", folder.string(), "' does not exist (create it first)"));
  }
  if (!fs::is_directory(status)) {
    return InvalidArgumentError(StrCat(where, "'", folder.string(), "' is not a folder"));
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgumentError(StrCat(where, "folder '", folder.string(), "' is not writable"));
  }
  return Status::Ok();
}

}  // namespace

Status CheckOutputPath(std::string_view option, const std::string& path, OutputKind kind,
                       std::span<const std::string> inputs) {
  const std::string where = StrCat(option, " '", path, "': ");
  if (path.empty()) return InvalidArgumentError(StrCat(option, ": the path is empty"));
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  const bool exists = fs::exists(status);
  for (const std::string& input : inputs) {
    if (exists && !input.empty() && fs::equivalent(path, input, error)) {
      return InvalidArgumentError(StrCat(where, "is also the input '", input,
                                         "', which writing it would overwrite: name another path"));
    }
  }
  if (kind == OutputKind::kFile && exists && fs::is_directory(status)) {
    return InvalidArgumentError(StrCat(where, "is a folder, not a file"));
  }
  if (kind == OutputKind::kFolder && exists) {
    if (!fs::is_directory(status)) {
      return InvalidArgumentError(StrCat(where, "exists and is not a folder"));
    }
    return CheckWritableFolder(option, path, path);
  }
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  return CheckWritableFolder(option, path, parent);
}

}  // namespace zerograph
