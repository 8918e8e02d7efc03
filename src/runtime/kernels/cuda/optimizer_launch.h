#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_OPTIMIZER_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_OPTIMIZER_LAUNCH_H_

// Launchers of the fused multi-tensor optimizer updates (optimizers.cu), plain C++ for the host
// compiler. One launch updates every tensor of a node (up to kTensorsPerLaunch; more take
// ceil(n / kTensorsPerLaunch) launches): the tensor table travels as a kernel parameter, so
// nothing is copied to the device first. Element math is fp32 for fp32/fp16/bf16 (fp64 for
// fp64), with each multiply, add, divide and square root rounded on its own (no fused
// multiply-add), so the result equals the CPU kernel's bit for bit on normal inputs. Outputs may
// alias their inputs (in place).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/kernels/adamw_coefficients.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// One tensor of a multi-tensor update: its element count, its inputs (X, G, then the states, as
// many as the optimizer has) and its outputs (X', then the new states).
struct UpdateTensors {
  int64_t numel = 0;
  const void* in[4] = {};
  void* out[3] = {};
};

// The tensors one launch covers; the table stays under the classic 4 KiB parameter limit.
inline constexpr int kTensorsPerLaunch = 48;

// AdamW (in: X G M V; out: X' M' V'), fp32 / fp16 / bf16. `control` is null or org.zerograph's
// fp32[3] control in device memory, read by the kernel itself (no host sync): the gradients are
// multiplied by control[0], and control[1] != 0 skips the update (outputs not in place get their
// inputs copied).
cudaError_t LaunchAdamW(DataType dtype, const AdamWCoefficients& c, const float* control,
                        const UpdateTensors* tensors, size_t count, cudaStream_t stream);
// SGD (in: X G; out: X'), fp32 / fp16 / bf16; `control` as for AdamW.
cudaError_t LaunchSgd(DataType dtype, float lr, const float* control, const UpdateTensors* tensors,
                      size_t count, cudaStream_t stream);

// ONNX Adam's scalars, computed on the host as the CPU kernel computes them; the kernel rounds
// each to the tensor's type, as the CPU does.
struct OnnxAdamScalars {
  double ra, alpha, one_minus_alpha, beta, one_minus_beta, epsilon, norm, post;
};
// Adam (in: X G V H; out: X' V' H'), fp32 / fp64.
cudaError_t LaunchOnnxAdam(DataType dtype, const OnnxAdamScalars& s, const UpdateTensors* tensors,
                           size_t count, cudaStream_t stream);

struct OnnxMomentumScalars {
  double rate, alpha, beta, norm;
  bool nesterov;
};
// Momentum (in: X G V; out: X' V'), fp32 / fp64.
cudaError_t LaunchOnnxMomentum(DataType dtype, const OnnxMomentumScalars& s,
                               const UpdateTensors* tensors, size_t count, cudaStream_t stream);

struct OnnxAdagradScalars {
  double rate, epsilon, norm;
};
// Adagrad (in: X G H; out: X' H'), fp32 / fp64.
cudaError_t LaunchOnnxAdagrad(DataType dtype, const OnnxAdagradScalars& s,
                              const UpdateTensors* tensors, size_t count, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_OPTIMIZER_LAUNCH_H_
