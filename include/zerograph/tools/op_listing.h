#ifndef ZEROGRAPH_TOOLS_OP_LISTING_H_
#define ZEROGRAPH_TOOLS_OP_LISTING_H_

#include <string>

#include "zerograph/core/status.h"

namespace zerograph::runtime {

// The ops this build runs, for users (graph-exec --list-ops): one line per op with its domain,
// the opset versions its contract implements, and the dtypes of its kernels on each backend.
StatusOr<std::string> ListSupportedOps();

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_TOOLS_OP_LISTING_H_
