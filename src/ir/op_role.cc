#include "zerograph/ir/op_role.h"

namespace zerograph {

std::string_view OpRoleName(OpRole role) {
  switch (role) {
    case OpRole::kForward:
      return "forward";
    case OpRole::kBackward:
      return "backward";
    case OpRole::kOptimize:
      return "optimizer";
  }
  return "unknown";
}

}  // namespace zerograph
