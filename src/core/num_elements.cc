#include "zerograph/core/num_elements.h"

#include <algorithm>

#include "zerograph/core/str_cat.h"

namespace zerograph {

StatusOr<int64_t> CheckedNumElements(std::span<const int64_t> shape) {
  for (int64_t d : shape) {
    ZG_RETURN_IF_NOT(d >= 0, "shape [", StrJoin(shape, ","), "] has a negative dimension");
  }
  // A zero dimension empties the tensor whatever the others multiply to.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return int64_t{0};
  int64_t n = 1;
  for (int64_t d : shape) {
    ZG_RETURN_IF_NOT(!__builtin_mul_overflow(n, d, &n), "shape [", StrJoin(shape, ","),
                     "] has more elements than int64 can count");
  }
  return n;
}

}  // namespace zerograph
