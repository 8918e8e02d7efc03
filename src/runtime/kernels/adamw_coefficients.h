#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ADAMW_COEFFICIENTS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ADAMW_COEFFICIENTS_H_

// The scalars of one AdamW step and the fp32 coefficients every device's update uses, computed
// once on the host, so the CPU and CUDA updates agree to the rounding of their element math.
// Plain C++ (no zerograph headers): the CUDA kernels include it too.

#include <cmath>
#include <cstdint>

namespace zerograph::runtime {

// The scalars of one AdamW step (docs/formats.md, PyTorch's AdamW).
struct AdamWScalars {
  float lr = 0;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.01f;
  int64_t step = 1;  // t, 1-based
};

// What the element loop multiplies by:
//   X ← X·decay − step_size·M' / (√V'·inv_sqrt_bc2 + eps)
//   M' = b1·M + one_minus_b1·G;  V' = b2·V + one_minus_b2·G²
struct AdamWCoefficients {
  float decay;
  float step_size;
  float inv_sqrt_bc2;
  float b1;
  float b2;
  float one_minus_b1;
  float one_minus_b2;
  float eps;
};

// Scalars in double, rounded once, as PyTorch computes them in Python.
inline AdamWCoefficients ComputeAdamWCoefficients(const AdamWScalars& s) {
  const double t = static_cast<double>(s.step);
  AdamWCoefficients c;
  c.decay = static_cast<float>(1.0 - static_cast<double>(s.lr) * s.weight_decay);
  c.step_size = static_cast<float>(s.lr / (1.0 - std::pow(double{s.beta1}, t)));
  c.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double{s.beta2}, t)));
  c.b1 = s.beta1;
  c.b2 = s.beta2;
  c.one_minus_b1 = static_cast<float>(1.0 - s.beta1);
  c.one_minus_b2 = static_cast<float>(1.0 - s.beta2);
  c.eps = s.epsilon;
  return c;
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ADAMW_COEFFICIENTS_H_
