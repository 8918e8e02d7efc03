#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_BINARY_LOOP_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_BINARY_LOOP_H_

// The CPU loop of every broadcast binary op: the table's ops (elementwise.cc), the variadic ops'
// steps, Pow and Mod. `fn` takes the two loaded elements (Load: fp32 for the 16-bit floats) and
// returns the output element, stored.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/core/num_elements.h"

namespace zerograph::runtime {

// out[i] = fn(a[i·sa], b[i·sb]) for i < n; strides are 0 or 1, so each case is its own loop the
// compiler vectorizes.
template <typename TA, typename TB, typename Out, typename Fn>
void RunBinary(const TA* a, int64_t sa, const TB* b, int64_t sb, Out* out, int64_t n,
               const Fn& fn) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = fn(Load(a[i]), Load(b[i]));
  } else if (sa == 1) {
    const auto vb = Load(b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = fn(Load(a[i]), vb);
  } else if (sb == 1) {
    const auto va = Load(a[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = fn(va, Load(b[i]));
  } else {
    const Out v = fn(Load(a[0]), Load(b[0]));
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

// out = fn(a, b) with a and b broadcast to `out_shape` (which they must broadcast to), out
// contiguous. Reads each element of a and b before writing the output element at the same
// position, so `out` may be `a` or `b` when that has the output's shape.
template <typename TA, typename TB, typename Out, typename Fn>
void BroadcastBinary(const TA* a, std::span<const int64_t> a_shape, const TB* b,
                     std::span<const int64_t> b_shape, Out* out, std::span<const int64_t> out_shape,
                     const Fn& fn) {
  const auto same = [&](std::span<const int64_t> s) {
    return std::equal(s.begin(), s.end(), out_shape.begin(), out_shape.end());
  };
  if (same(a_shape) && same(b_shape)) {  // the common case: no index arithmetic
    RunBinary(a, 1, b, 1, out, NumElements(out_shape), fn);
    return;
  }
  const std::array<std::span<const int64_t>, 2> inputs = {a_shape, b_shape};
  const BroadcastPlan plan = PlanBroadcast(out_shape, inputs);
  const int64_t sa = plan.strides[0].back();
  const int64_t sb = plan.strides[1].back();
  int64_t out_offset = 0;
  ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
    RunBinary(a + offsets[0], sa, b + offsets[1], sb, out + out_offset, n, fn);
    out_offset += n;
  });
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_BINARY_LOOP_H_
