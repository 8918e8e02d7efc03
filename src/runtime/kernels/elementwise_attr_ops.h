#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_ATTR_OPS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_ATTR_OPS_H_

// The element-wise math that does not fit the tables of elementwise_ops.h, written once for every
// device: functors that hold their attributes (LeakyRelu's alpha, Clip's bounds), ops whose inputs
// differ in dtype (Pow) or whose form an attribute picks (Mod, Gelu), the steps of the variadic
// ops, and Where. Each computes in A (float for the 16-bit floats). Compiled by the host compiler
// and by nvcc.

#include <type_traits>

#include "runtime/kernels/elementwise_ops.h"

namespace zerograph::runtime::elementwise {

namespace math {
#ifdef __CUDA_ARCH__
template <typename A>
ZG_HOST_DEVICE inline A Fmod(A a, A b) {
  return fmod(a, b);
}
template <typename A>
ZG_HOST_DEVICE inline A Pow(A a, A b) {
  return pow(a, b);
}
#else
template <typename A>
inline A Fmod(A a, A b) {
  return std::fmod(a, b);
}
template <typename A>
inline A Pow(A a, A b) {
  return std::pow(a, b);
}
#endif
}  // namespace math

// y = x for x >= 0, alpha·x below.
template <typename A>
struct LeakyReluFn {
  A alpha;
  ZG_HOST_DEVICE A operator()(A x) const { return x < A(0) ? alpha * x : x; }
};

// min(max(x, lo), hi), as numpy clips: hi wins when lo > hi; NaN stays NaN.
template <typename A>
struct ClipFn {
  A lo;
  A hi;
  ZG_HOST_DEVICE A operator()(A x) const {
    const A raised = x < lo ? lo : x;
    return raised > hi ? hi : raised;
  }
};

// y = x·factor (Mean's 1/n, ONNX Runtime's Scale).
template <typename A>
struct ScaleFn {
  A factor;
  ZG_HOST_DEVICE A operator()(A x) const { return x * factor; }
};

template <typename A>
struct GeluExactFn {
  ZG_HOST_DEVICE A operator()(A x) const { return GeluMath::Exact(x); }
};
template <typename A>
struct GeluTanhFn {
  ZG_HOST_DEVICE A operator()(A x) const { return GeluMath::Tanh(x); }
};

// Mod: the remainder with the dividend's sign (fmod=1, C's % and fmod) or the divisor's (fmod=0,
// Python's %: integers only). x % 0 is 0 rather than a trap, as is MIN % -1.
struct ModMath {
  template <typename A>
  ZG_HOST_DEVICE static A Truncated(A a, A b) {
    if constexpr (std::is_floating_point_v<A>) {
      return math::Fmod(a, b);
    } else {
      if (b == A(0)) return A(0);
      if constexpr (std::is_signed_v<A>) {
        if (b == A(-1)) return A(0);
      }
      return static_cast<A>(a % b);
    }
  }
  template <typename A>
  ZG_HOST_DEVICE static A Floored(A a, A b) {
    const A r = Truncated(a, b);
    if constexpr (std::is_signed_v<A>) {
      if (r != A(0) && ((r < A(0)) != (b < A(0)))) return static_cast<A>(r + b);
    }
    return r;
  }
};
template <typename A>
struct TruncatedModFn {
  ZG_HOST_DEVICE A operator()(A a, A b) const { return ModMath::Truncated(a, b); }
};
template <typename A>
struct FlooredModFn {
  ZG_HOST_DEVICE A operator()(A a, A b) const { return ModMath::Floored(a, b); }
};

// Pow with a base of A and an exponent of B: in their common float type when both are floats,
// else in double (an integer result is then truncated toward zero, as a C cast does).
template <typename A, typename B>
ZG_HOST_DEVICE inline A PowOf(A base, B exponent) {
  using C = std::conditional_t<std::is_floating_point_v<A> && std::is_floating_point_v<B>,
                               std::common_type_t<A, B>, double>;
  return static_cast<A>(math::Pow(static_cast<C>(base), static_cast<C>(exponent)));
}

// The steps the variadic ops fold their inputs with (Sum and Mean use Add). NaN wins, as in
// numpy's maximum and minimum.
template <typename A>
ZG_HOST_DEVICE inline bool IsNan(A a) {
  if constexpr (std::is_floating_point_v<A>) {
    return a != a;
  } else {
    return false;
  }
}
struct MaxOf {
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return (a > b || IsNan(a)) ? a : b;
  }
};
struct MinOf {
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return (a < b || IsNan(a)) ? a : b;
  }
};
using VariadicSteps = OpList<Add, MaxOf, MinOf>;

}  // namespace zerograph::runtime::elementwise

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_ATTR_OPS_H_
