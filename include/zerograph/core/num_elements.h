#ifndef ZEROGRAPH_CORE_NUM_ELEMENTS_H_
#define ZEROGRAPH_CORE_NUM_ELEMENTS_H_

#include <cstdint>
#include <span>

#include "zerograph/core/status.h"

namespace zerograph {

// The number of elements of a tensor of `shape`: the product of its dimensions, 1 for a scalar.
// Unchecked, for hot paths: the shape must have passed CheckedNumElements (or come from one that
// did), since a negative dimension or an overflowing product gives a meaningless result.
inline int64_t NumElements(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The number of elements of `shape`, or InvalidArgument when a dimension is negative or the
// product does not fit int64 (a shape read from a file is untrusted).
StatusOr<int64_t> CheckedNumElements(std::span<const int64_t> shape);

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_NUM_ELEMENTS_H_
