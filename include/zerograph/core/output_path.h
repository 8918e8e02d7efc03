#ifndef ZEROGRAPH_CORE_OUTPUT_PATH_H_
#define ZEROGRAPH_CORE_OUTPUT_PATH_H_

#include <span>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph {

// What a program will write at an output path.
enum class OutputKind {
  kFile,    // a file, replaced if it exists
  kFolder,  // a folder, created if missing (its parent is not)
};

// The one rule the three programs apply to every output path they are given, before any work, so
// that nothing runs for minutes and then fails to write its result: the folder that will hold the
// output exists, is a folder and is writable; the path is not something of the other kind; and it
// is none of `inputs` (which the output would overwrite). InvalidArgument (exit 2) naming
// `option`, the path and the reason otherwise.
Status CheckOutputPath(std::string_view option, const std::string& path, OutputKind kind,
                       std::span<const std::string> inputs = {});

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_OUTPUT_PATH_H_
