#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_GRADIENT_CONTROL_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_GRADIENT_CONTROL_H_

// org.zerograph GradientControl's arithmetic (docs/formats.md), written once for the CPU kernel
// and the CUDA one: from the gradients' sum of squares (as scaled by the loss scale), the
// optimizers' control [gradient factor, skip, norm] with PyTorch's clip_grad_norm_, and
// GradScaler.update's next loss scale. In double, stored as fp32. Plain C++ for nvcc too.

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define ZG_HOST_DEVICE __host__ __device__
#else
#define ZG_HOST_DEVICE
#endif

namespace zerograph::runtime {

struct GradientControlAttrs {
  double max_norm = 0;  // 0: no clipping
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

struct GradientControlResult {
  float control[3];  // [clip / scale, skip (1 or 0), unscaled gradient norm]
  float new_scale;
  float new_good_steps;
};

// With `scaled` false (no loss scaling), scale is 1 and good_steps is not read; new_scale and
// new_good_steps are then meaningless.
//   norm = √s / scale;  clip = min(1, max_norm / (norm + 1e-6)) when clipping and s is finite
//   control = [clip / scale, scaled && !finite(s), norm]
//   !finite(s): scale·backoff, 0 good steps;  else good + 1, and at growth_interval scale·growth, 0
ZG_HOST_DEVICE inline GradientControlResult ComputeGradientControl(const GradientControlAttrs& a,
                                                                   float sum_squares, bool scaled,
                                                                   float scale, float good_steps) {
  const double s = sum_squares;
  const double sc = scaled ? double{scale} : 1.0;
  const bool finite = s - s == 0.0;  // false for inf and NaN, alike on host and device
  const double norm = sqrt(s) / sc;
  const double clip = a.max_norm > 0 && finite ? fmin(1.0, a.max_norm / (norm + 1e-6)) : 1.0;
  GradientControlResult r;
  r.control[0] = static_cast<float>(clip / sc);
  r.control[1] = scaled && !finite ? 1.0f : 0.0f;
  r.control[2] = static_cast<float>(norm);
  double new_scale = sc;
  double new_good = 0;
  if (!finite) {
    new_scale = sc * a.backoff_factor;
  } else {
    new_good = double{good_steps} + 1;
    if (new_good >= static_cast<double>(a.growth_interval)) {
      new_scale = sc * a.growth_factor;
      new_good = 0;
    }
  }
  r.new_scale = static_cast<float>(new_scale);
  r.new_good_steps = static_cast<float>(new_good);
  return r;
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_GRADIENT_CONTROL_H_
