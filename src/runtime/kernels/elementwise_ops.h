#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_

// The element-wise ops, written once for every device: each is a functor that the CPU loop
// (cpu/elementwise.cc) and the CUDA kernel (cuda/elementwise.cu) both call, with the dtypes its
// kernels take, and one table line (UnaryOps, BinaryOps) that registers it on every device.
// Adding one: its op contract (src/ir/contracts/), a functor here, its line in the table, a test.
//
// `Apply` computes in A: float for the 16-bit floats (loaded and stored around it), T otherwise.
// Compiled by the host compiler and by nvcc.

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "runtime/kernels/dtype_list.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/op_role.h"

#ifdef __CUDACC__
#define ZG_HOST_DEVICE __host__ __device__
#else
#define ZG_HOST_DEVICE
#endif

namespace zerograph::runtime::elementwise {

template <typename... Ops>
struct OpList {};

// The position of Op in a list: what the host side passes to the CUDA launchers.
template <typename Op, typename First, typename... Rest>
constexpr size_t IndexOf(OpList<First, Rest...>) {
  if constexpr (std::is_same_v<Op, First>) {
    return 0;
  } else {
    return 1 + IndexOf<Op>(OpList<Rest...>{});
  }
}

// --- One input.
struct Relu {
  static constexpr std::string_view kDomain = "", kName = "Relu";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return x > A(0) ? x : A(0);
  }
};
struct Neg {
  static constexpr std::string_view kDomain = "", kName = "Neg";
  using Types = NumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return -x;
  }
};
struct Sqrt {
  static constexpr std::string_view kDomain = "", kName = "Sqrt";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
#ifdef __CUDA_ARCH__
    return sqrt(x);  // correctly rounded for float and double (nvcc's default -prec-sqrt=true)
#else
    return std::sqrt(x);
#endif
  }
};
struct Sin {
  static constexpr std::string_view kDomain = "", kName = "Sin";
  using Types = IeeeFloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
#ifdef __CUDA_ARCH__
    return sin(x);
#else
    return std::sin(x);
#endif
  }
};
using UnaryOps = OpList<Relu, Neg, Sqrt, Sin>;

// --- Two inputs, broadcast (kBoolOutput: the output is bool).
struct Add {
  static constexpr std::string_view kDomain = "", kName = "Add";
  static constexpr bool kBoolOutput = false;
  using Types = NumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a + b;
  }
};
struct Sub {
  static constexpr std::string_view kDomain = "", kName = "Sub";
  static constexpr bool kBoolOutput = false;
  using Types = NumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a - b;
  }
};
struct Mul {
  static constexpr std::string_view kDomain = "", kName = "Mul";
  static constexpr bool kBoolOutput = false;
  using Types = NumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a * b;
  }
};
// Floats only: C++ truncates negative integer quotients where numpy floors.
struct Div {
  static constexpr std::string_view kDomain = "", kName = "Div";
  static constexpr bool kBoolOutput = false;
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a / b;
  }
};
struct Greater {
  static constexpr std::string_view kDomain = "", kName = "Greater";
  static constexpr bool kBoolOutput = true;
  using Types = NumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a > b;
  }
};
// ReluGrad(dY, X) = dY where X > 0, else 0.
struct ReluGrad {
  static constexpr std::string_view kDomain = kZerographDomain, kName = "ReluGrad";
  static constexpr bool kBoolOutput = false;
  using Types = GradientDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A dy, A x) {
    return x > A(0) ? dy : A(0);
  }
};
using BinaryOps = OpList<Add, Sub, Mul, Div, Greater, ReluGrad>;

}  // namespace zerograph::runtime::elementwise

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_
