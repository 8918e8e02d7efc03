#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_ADAMW_UPDATE_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_ADAMW_UPDATE_H_

#include <cstdint>

#include "runtime/kernels/adamw_coefficients.h"

namespace zerograph::runtime {

// One pass over n elements, computing in fp32 whatever T stores (float, Float16, BFloat16), in
// either mode of AdamWCoefficients, with G = grad_scale·g (the control's scale; 1 without one):
//   M ← β1·M + (1−β1)·G;  V ← β2·V + (1−β2)·G²
//   X ← (X·pre_decay − step_size·M / (√V·inv_sqrt_bc2 + ε))·post_decay
// It reads x, g, m, v and writes x_out, m_out, v_out once each, so it runs at memory bandwidth;
// the outputs may be the inputs (in place).
template <typename T>
void AdamWUpdate(const AdamWScalars& s, float grad_scale, int64_t n, const T* x, const T* g,
                 const T* m, const T* v, T* x_out, T* m_out, T* v_out);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_ADAMW_UPDATE_H_
