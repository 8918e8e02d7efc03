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

// The math library on either side: std:: on the host, CUDA's overloads on the device.
#ifdef __CUDA_ARCH__
#define ZG_MATH_FN(Name, fn)          \
  template <typename A>               \
  ZG_HOST_DEVICE inline A Name(A x) { \
    return fn(x);                     \
  }
#else
#define ZG_MATH_FN(Name, fn)          \
  template <typename A>               \
  ZG_HOST_DEVICE inline A Name(A x) { \
    return std::fn(x);                \
  }
#endif
namespace math {
ZG_MATH_FN(Exp, exp)
ZG_MATH_FN(Log, log)
ZG_MATH_FN(Erf, erf)
ZG_MATH_FN(Tanh, tanh)
ZG_MATH_FN(Floor, floor)
ZG_MATH_FN(Ceil, ceil)
}  // namespace math
#undef ZG_MATH_FN

// Gelu's two forms and their derivatives, shared by Gelu, GeluGrad, FastGeluGrad and
// BiasGeluGrad_dX.
struct GeluMath {
  // Exact: x·Φ(x) = x/2·(1 + erf(x/√2)); d/dx = Φ(x) + x·φ(x).
  template <typename A>
  ZG_HOST_DEVICE static A Exact(A x) {
    return A(0.5) * x * (A(1) + math::Erf(x * A(0.70710678118654752440)));
  }
  template <typename A>
  ZG_HOST_DEVICE static A ExactDerivative(A x) {
    const A cdf = A(0.5) * (A(1) + math::Erf(x * A(0.70710678118654752440)));
    const A pdf = A(0.39894228040143267794) * math::Exp(A(-0.5) * x * x);
    return cdf + x * pdf;
  }
  // Tanh form: x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
  template <typename A>
  ZG_HOST_DEVICE static A Tanh(A x) {
    const A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
    return A(0.5) * x * (A(1) + math::Tanh(inner));
  }
  template <typename A>
  ZG_HOST_DEVICE static A TanhDerivative(A x) {
    const A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
    const A t = math::Tanh(inner);
    const A inner_dx = A(0.79788456080286535588) * (A(1) + A(3 * 0.044715) * x * x);
    return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * inner_dx;
  }
};

// --- One input.
struct Relu {
  static constexpr std::string_view kDomain = "", kName = "Relu";
  using Types = SignedNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return x > A(0) ? x : A(0);
  }
};
struct Neg {
  static constexpr std::string_view kDomain = "", kName = "Neg";
  using Types = SignedNumericDtypes;
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
template <typename A>
inline constexpr bool kUnsigned = std::is_unsigned_v<A> && !std::is_same_v<A, bool>;
struct Abs {
  static constexpr std::string_view kDomain = "", kName = "Abs";
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    if constexpr (kUnsigned<A>) {
      return x;
    } else {
      return x < A(0) ? A(-x) : x;
    }
  }
};
struct Exp {
  static constexpr std::string_view kDomain = "", kName = "Exp";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return math::Exp(x);
  }
};
struct Log {
  static constexpr std::string_view kDomain = "", kName = "Log";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return math::Log(x);
  }
};
struct Reciprocal {
  static constexpr std::string_view kDomain = "", kName = "Reciprocal";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return A(1) / x;
  }
};
struct Erf {
  static constexpr std::string_view kDomain = "", kName = "Erf";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return math::Erf(x);
  }
};
struct Tanh {
  static constexpr std::string_view kDomain = "", kName = "Tanh";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return math::Tanh(x);
  }
};
// 1/(1 + e^-x) for x >= 0, e^x/(1 + e^x) below: neither form overflows.
struct Sigmoid {
  static constexpr std::string_view kDomain = "", kName = "Sigmoid";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    const A e = math::Exp(x < A(0) ? x : A(-x));
    return x < A(0) ? e / (A(1) + e) : A(1) / (A(1) + e);
  }
};
struct Floor {
  static constexpr std::string_view kDomain = "", kName = "Floor";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return math::Floor(x);
  }
};
struct Ceil {
  static constexpr std::string_view kDomain = "", kName = "Ceil";
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return math::Ceil(x);
  }
};
struct Sign {
  static constexpr std::string_view kDomain = "", kName = "Sign";
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    if constexpr (kUnsigned<A>) {
      return x > A(0) ? A(1) : A(0);
    } else {
      return x > A(0) ? A(1) : x < A(0) ? A(-1) : A(0);
    }
  }
};
struct Not {
  static constexpr std::string_view kDomain = "", kName = "Not";
  using Types = BoolDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A x) {
    return !x;
  }
};
using UnaryOps = OpList<Relu, Neg, Sqrt, Sin, Abs, Exp, Log, Reciprocal, Erf, Tanh, Sigmoid, Floor,
                        Ceil, Sign, Not>;

// --- Two inputs, broadcast (kBoolOutput: the output is bool).
struct Add {
  static constexpr std::string_view kDomain = "", kName = "Add";
  static constexpr bool kBoolOutput = false;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a + b;
  }
};
struct Sub {
  static constexpr std::string_view kDomain = "", kName = "Sub";
  static constexpr bool kBoolOutput = false;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a - b;
  }
};
struct Mul {
  static constexpr std::string_view kDomain = "", kName = "Mul";
  static constexpr bool kBoolOutput = false;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    return a * b;
  }
};
// Integers truncate toward zero, as ONNX Runtime's kernels do. Where the hardware would trap
// (x / 0, MIN / -1) the result is defined instead: 0, and MIN wrapped.
struct Div {
  static constexpr std::string_view kDomain = "", kName = "Div";
  static constexpr bool kBoolOutput = false;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
      if (b == A(0)) return A(0);
      if constexpr (std::is_signed_v<A>) {
        using U = std::make_unsigned_t<A>;
        if (b == A(-1)) return static_cast<A>(U(0) - static_cast<U>(a));
      }
    }
    return a / b;
  }
};
struct Greater {
  static constexpr std::string_view kDomain = "", kName = "Greater";
  static constexpr bool kBoolOutput = true;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a > b;
  }
};
// Comparisons and logic: bool out. Equal on floats compares values (NaN is unequal).
struct Equal {
  static constexpr std::string_view kDomain = "", kName = "Equal";
  static constexpr bool kBoolOutput = true;
  using Types = EqualityDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a == b;
  }
};
struct Less {
  static constexpr std::string_view kDomain = "", kName = "Less";
  static constexpr bool kBoolOutput = true;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a < b;
  }
};
struct LessOrEqual {
  static constexpr std::string_view kDomain = "", kName = "LessOrEqual";
  static constexpr bool kBoolOutput = true;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a <= b;
  }
};
struct GreaterOrEqual {
  static constexpr std::string_view kDomain = "", kName = "GreaterOrEqual";
  static constexpr bool kBoolOutput = true;
  using Types = AllNumericDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a >= b;
  }
};
struct And {
  static constexpr std::string_view kDomain = "", kName = "And";
  static constexpr bool kBoolOutput = true;
  using Types = BoolDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a && b;
  }
};
struct Or {
  static constexpr std::string_view kDomain = "", kName = "Or";
  static constexpr bool kBoolOutput = true;
  using Types = BoolDtypes;
  template <typename A>
  ZG_HOST_DEVICE static bool Apply(A a, A b) {
    return a || b;
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
// ONNX Runtime's gradients (com.microsoft): dX from dY and the forward op's input or output.
struct MicrosoftReluGrad {
  static constexpr std::string_view kDomain = kMicrosoftDomain, kName = "ReluGrad";
  static constexpr bool kBoolOutput = false;
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A dy, A x) {
    return x > A(0) ? dy : A(0);
  }
};
// From Y = sigmoid(X): dX = dY·Y·(1 - Y).
struct SigmoidGrad {
  static constexpr std::string_view kDomain = kMicrosoftDomain, kName = "SigmoidGrad";
  static constexpr bool kBoolOutput = false;
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A dy, A y) {
    return dy * y * (A(1) - y);
  }
};
// From Y = tanh(X): dX = dY·(1 - Y²).
struct TanhGrad {
  static constexpr std::string_view kDomain = kMicrosoftDomain, kName = "TanhGrad";
  static constexpr bool kBoolOutput = false;
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A dy, A y) {
    return dy * (A(1) - y * y);
  }
};
struct GeluGrad {
  static constexpr std::string_view kDomain = kMicrosoftDomain, kName = "GeluGrad";
  static constexpr bool kBoolOutput = false;
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A dy, A x) {
    return dy * GeluMath::ExactDerivative(x);
  }
};
struct FastGeluGrad {
  static constexpr std::string_view kDomain = kMicrosoftDomain, kName = "FastGeluGrad";
  static constexpr bool kBoolOutput = false;
  using Types = FloatDtypes;
  template <typename A>
  ZG_HOST_DEVICE static A Apply(A dy, A x) {
    return dy * GeluMath::TanhDerivative(x);
  }
};
using BinaryOps =
    OpList<Add, Sub, Mul, Div, Greater, ReluGrad, Equal, Less, LessOrEqual, GreaterOrEqual, And, Or,
           MicrosoftReluGrad, SigmoidGrad, TanhGrad, GeluGrad, FastGeluGrad>;

}  // namespace zerograph::runtime::elementwise

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_
