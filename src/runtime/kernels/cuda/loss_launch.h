#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_LOSS_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_LOSS_LAUNCH_H_

// The launchers of the classification losses and their gradients (loss.cu), plain C++ for the
// host compiler. Scores are [N, C, D] (loss_shapes.h); sums are in double, in a fixed order, so a
// run repeats bit for bit. A label outside [0, C) that is not ignored makes the loss NaN (a GPU
// kernel cannot return an error).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/kernels/loss_reduction.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// The blocks a reduced loss sums over: its workspace holds two doubles per block and one more.
inline constexpr int kLossBlocks = 256;
inline constexpr int64_t kLossWorkspaceDoubles = 2 * kLossBlocks + 1;

struct LossProblem {
  DataType dtype = DataType::kFloat32;      // scores, weights, log_prob, dY
  DataType out_dtype = DataType::kFloat32;  // the loss, d_logits, bias
  DataType label_dtype = DataType::kInt64;  // int32 or int64
  int64_t n = 0, c = 0, d = 1;
  LossReduction reduction = LossReduction::kMean;
  bool has_ignore = false;
  int64_t ignore = 0;
  const void* labels = nullptr;
  const void* weights = nullptr;  // null: every weight 1
  double* workspace = nullptr;    // kLossWorkspaceDoubles
};

// loss (and log_prob when not null) of `scores`; `softmax` false: the scores are
// log-probabilities already (NegativeLogLikelihoodLoss).
cudaError_t LaunchLoss(const LossProblem& p, bool softmax, const void* scores, void* loss,
                       void* log_prob, cudaStream_t stream);

// d_logits = dY' · w · (exp(log_prob) - onehot(label)) + bias (when not null).
cudaError_t LaunchLossGrad(const LossProblem& p, const void* dy, const void* log_prob,
                           const void* bias, void* d_logits, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_LOSS_LAUNCH_H_
