#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_OPS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_OPS_H_

// ONNX's reductions, each as what it accumulates and how it finishes, written once for the CPU
// loop (kernels/cpu/reduce.cc) and the CUDA kernels (kernels/cuda/reduce.cu). Compiled by the host
// compiler and by nvcc.

#include <math.h>

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define ZG_HOST_DEVICE __host__ __device__
#else
#define ZG_HOST_DEVICE
#endif

namespace zerograph::runtime {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

// Whether an integer input accumulates exactly in int64; the others (means, roots, logs) go
// through double and are truncated back, as ONNX's reference does.
constexpr bool IsExactOnIntegers(ReduceOp op) {
  return op == ReduceOp::kSum || op == ReduceOp::kMax || op == ReduceOp::kMin ||
         op == ReduceOp::kProd || op == ReduceOp::kSumSquare || op == ReduceOp::kL1;
}

// The accumulator of `op` over elements of a type whose arithmetic type is `Arith`: double for
// floats (sums then do not depend on the order of visits), int64 or double for integers.
template <ReduceOp kOp, typename Arith>
using ReduceAcc =
    std::conditional_t<std::is_integral_v<Arith> && IsExactOnIntegers(kOp), int64_t, double>;

// A running reduction. `shift` is LogSumExp's running maximum (the sum is of exp(v - shift)).
template <typename Acc>
struct ReduceState {
  Acc value;
  Acc shift;
};

template <ReduceOp kOp, typename Acc>
struct Reducer {
  static ZG_HOST_DEVICE ReduceState<Acc> Init() {
    if constexpr (kOp == ReduceOp::kMax) return {Lowest(), Acc(0)};
    if constexpr (kOp == ReduceOp::kMin) return {Highest(), Acc(0)};
    if constexpr (kOp == ReduceOp::kProd) return {Acc(1), Acc(0)};
    if constexpr (kOp == ReduceOp::kLogSumExp) return {Acc(0), Lowest()};
    return {Acc(0), Acc(0)};
  }

  static ZG_HOST_DEVICE void Add(ReduceState<Acc>& s, Acc v) {
    if constexpr (kOp == ReduceOp::kMax) {
      if (v > s.value) s.value = v;
    } else if constexpr (kOp == ReduceOp::kMin) {
      if (v < s.value) s.value = v;
    } else if constexpr (kOp == ReduceOp::kProd) {
      s.value *= v;
    } else if constexpr (kOp == ReduceOp::kSumSquare || kOp == ReduceOp::kL2) {
      s.value += v * v;
    } else if constexpr (kOp == ReduceOp::kL1) {
      s.value += v < 0 ? -v : v;
    } else if constexpr (kOp == ReduceOp::kLogSumExp) {
      Merge(s, {Acc(1), v});
    } else {
      s.value += v;
    }
  }

  // Combines two partial reductions (the CUDA block trees).
  static ZG_HOST_DEVICE void Merge(ReduceState<Acc>& s, const ReduceState<Acc>& other) {
    if constexpr (kOp == ReduceOp::kMax || kOp == ReduceOp::kMin || kOp == ReduceOp::kProd) {
      Add(s, other.value);
    } else if constexpr (kOp == ReduceOp::kLogSumExp) {
      // Rescale the smaller-shift sum to the larger shift: every exp() argument is <= 0.
      if (other.value == 0 || other.shift == Lowest()) return;  // adds exp(-inf) = 0
      if (other.shift > s.shift) {
        s.value = s.value * ::exp(s.shift - other.shift) + other.value;
        s.shift = other.shift;
      } else {
        s.value += other.value * ::exp(other.shift - s.shift);
      }
    } else {
      s.value += other.value;
    }
  }

  static ZG_HOST_DEVICE Acc Finish(const ReduceState<Acc>& s, int64_t count) {
    if constexpr (kOp == ReduceOp::kMean) return s.value / static_cast<Acc>(count);
    if constexpr (kOp == ReduceOp::kL2) return ::sqrt(static_cast<double>(s.value));
    if constexpr (kOp == ReduceOp::kLogSum) return ::log(static_cast<double>(s.value));
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      return s.value == 0 ? Lowest() : ::log(static_cast<double>(s.value)) + s.shift;
    }
    return s.value;
  }

 private:
  // The identities of max and min: -inf and +inf for doubles (an empty reduction yields them),
  // the extremes for int64.
  static ZG_HOST_DEVICE Acc Lowest() {
    if constexpr (std::is_integral_v<Acc>) {
      return INT64_MIN;
    } else {
      return -HUGE_VAL;
    }
  }
  static ZG_HOST_DEVICE Acc Highest() {
    if constexpr (std::is_integral_v<Acc>) {
      return INT64_MAX;
    } else {
      return HUGE_VAL;
    }
  }
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_REDUCE_OPS_H_
