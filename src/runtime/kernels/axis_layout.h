#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_AXIS_LAYOUT_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_AXIS_LAYOUT_H_

// A contiguous tensor seen as [outer, n, inner] around the axis an op runs along (ArgMax,
// Softmax, their gradients), shared by the CPU and CUDA kernels.

#include <cstdint>
#include <span>

namespace zerograph::runtime {

struct AxisLayout {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// Around the (non-negative) `axis`: n is that dimension alone.
inline AxisLayout LayoutAround(std::span<const int64_t> shape, int64_t axis) {
  AxisLayout layout;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t dim = shape[static_cast<size_t>(d)];
    if (d < axis) {
      layout.outer *= dim;
    } else if (d == axis) {
      layout.n = dim;
    } else {
      layout.inner *= dim;
    }
  }
  return layout;
}

// Coerced to 2-D at `axis` (Softmax before opset 13, the normalizations): n is every dimension from
// `axis` on, inner is 1.
inline AxisLayout LayoutFrom(std::span<const int64_t> shape, int64_t axis) {
  AxisLayout layout;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    (d < axis ? layout.outer : layout.n) *= shape[static_cast<size_t>(d)];
  }
  return layout;
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_AXIS_LAYOUT_H_
