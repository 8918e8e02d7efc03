#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ADAMW_COEFFICIENTS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ADAMW_COEFFICIENTS_H_

// The scalars of one AdamW step and the fp32 coefficients every device's update uses, computed
// once on the host, so the CPU and CUDA updates agree to the rounding of their element math.
// Plain C++ (no zerograph headers): the CUDA kernels include it too.

#include <cmath>
#include <cstdint>

namespace zerograph::runtime {

// Where the weight decay applies (ONNX Runtime's AdamWOptimizer `adam_mode`).
enum class AdamMode : int64_t {
  // Decay X, then the bias-corrected update (torch.optim.AdamW).
  kPyTorch = 0,
  // The update with a bias-corrected step size, then decay X (transformers.AdamW).
  kHuggingFace = 1,
};

// The scalars of one AdamW step (docs/formats.md).
struct AdamWScalars {
  float lr = 0;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.01f;
  AdamMode mode = AdamMode::kPyTorch;
  bool correct_bias = true;
  int64_t step = 1;  // t, 1-based
};

// What the element loop multiplies by, one form for both modes:
//   M' = b1·M + one_minus_b1·G;  V' = b2·V + one_minus_b2·G²
//   X ← (X·pre_decay − step_size·M' / (√V'·inv_sqrt_bc2 + eps))·post_decay
// With bc1 = 1 − β1^t, bc2 = 1 − β2^t (1 without bias correction) and decay = 1 − lr·wd:
//   PyTorch:      pre_decay = decay, step_size = lr/bc1,       inv_sqrt_bc2 = 1/√bc2, post = 1
//   Hugging Face: pre_decay = 1,     step_size = lr·√bc2/bc1,  inv_sqrt_bc2 = 1,     post = decay
// A factor of exactly 1 leaves an fp32 product unchanged, so each mode rounds as its own formula.
struct AdamWCoefficients {
  float pre_decay;
  float step_size;
  float inv_sqrt_bc2;
  float post_decay;
  float b1;
  float b2;
  float one_minus_b1;
  float one_minus_b2;
  float eps;
};

// Scalars in double, rounded once, as PyTorch computes them in Python.
inline AdamWCoefficients ComputeAdamWCoefficients(const AdamWScalars& s) {
  const double t = static_cast<double>(s.step);
  const double bc1 = s.correct_bias ? 1.0 - std::pow(double{s.beta1}, t) : 1.0;
  const double bc2 = s.correct_bias ? 1.0 - std::pow(double{s.beta2}, t) : 1.0;
  const float decay = static_cast<float>(1.0 - static_cast<double>(s.lr) * s.weight_decay);
  const bool pytorch = s.mode == AdamMode::kPyTorch;
  AdamWCoefficients c;
  c.pre_decay = pytorch ? decay : 1.0f;
  c.post_decay = pytorch ? 1.0f : decay;
  c.step_size = static_cast<float>(pytorch ? s.lr / bc1 : s.lr * std::sqrt(bc2) / bc1);
  c.inv_sqrt_bc2 = pytorch ? static_cast<float>(1.0 / std::sqrt(bc2)) : 1.0f;
  c.b1 = s.beta1;
  c.b2 = s.beta2;
  c.one_minus_b1 = static_cast<float>(1.0 - s.beta1);
  c.one_minus_b2 = static_cast<float>(1.0 - s.beta2);
  c.eps = s.epsilon;
  return c;
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ADAMW_COEFFICIENTS_H_
