// The classification losses and their gradients. Forward: a warp per sample takes the max and
// the sum of exponentials over its C scores (shuffle reductions), writes log_prob, and lane 0 the
// sample's loss; a reduced loss sums per block, then one thread sums the kLossBlocks partials in
// order. Gradient: a thread per element of d_logits, after the same sum of weights for mean.

#include <cmath>
#include <cstdint>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/loss_launch.h"

namespace zerograph::runtime::cuda {
namespace {

constexpr int kWarps = kBlock / 32;

__device__ __forceinline__ double WarpMax(double v) {
  for (int step = 16; step > 0; step /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, step));
  return v;
}
__device__ __forceinline__ double WarpSum(double v) {
  for (int step = 16; step > 0; step /= 2) v += __shfl_xor_sync(0xffffffffu, v, step);
  return v;
}

// Sample s's label and weight: 0 when ignored, NaN when out of range.
template <typename T, typename L>
__device__ __forceinline__ double LabelWeight(const LossProblem& p, int64_t s, int64_t* label) {
  *label = static_cast<int64_t>(static_cast<const L*>(p.labels)[s]);
  if (p.has_ignore && *label == p.ignore) return 0.0;
  if (*label < 0 || *label >= p.c) {
    *label = 0;
    return nan("");
  }
  return p.weights != nullptr ? static_cast<double>(Load(static_cast<const T*>(p.weights)[*label]))
                              : 1.0;
}

// Block b's sums of its lanes-0 (loss, weight) into workspace[2b], workspace[2b + 1].
__device__ void BlockPartials(double loss, double weight, double* workspace) {
  __shared__ double sums[2][kWarps];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  if (lane == 0) {
    sums[0][warp] = loss;
    sums[1][warp] = weight;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double l = 0, w = 0;
    for (int i = 0; i < kWarps; ++i) {
      l += sums[0][i];
      w += sums[1][i];
    }
    workspace[2 * blockIdx.x] = l;
    workspace[2 * blockIdx.x + 1] = w;
  }
}

template <typename T, typename O, typename L>
__global__ void LossRowsKernel(LossProblem p, bool softmax, const T* x, O* loss, T* log_prob) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t samples = p.n * p.d;
  double loss_sum = 0, weight_sum = 0;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; s < samples;
       s += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t base = (s / p.d) * p.c * p.d + s % p.d;
    double lse = 0;
    if (softmax) {
      double max = -INFINITY;
      for (int64_t c = lane; c < p.c; c += 32) max = fmax(max, (double)Load(x[base + c * p.d]));
      max = WarpMax(max);
      double sum = 0;
      for (int64_t c = lane; c < p.c; c += 32) sum += exp((double)Load(x[base + c * p.d]) - max);
      lse = max + log(WarpSum(sum));
      if (log_prob != nullptr) {
        for (int64_t c = lane; c < p.c; c += 32) {
          const int64_t at = base + c * p.d;
          log_prob[at] = Store<T>(static_cast<Arith<T>>(Load(x[at]) - lse));
        }
      }
    }
    if (lane == 0) {
      int64_t label = 0;
      const double w = LabelWeight<T, L>(p, s, &label);
      const double l = w == 0 ? 0.0 : -((double)Load(x[base + label * p.d]) - lse) * w;
      if (p.reduction == LossReduction::kNone) loss[s] = Store<O>(static_cast<Arith<O>>(l));
      loss_sum += l;
      weight_sum += w;
    }
  }
  if (p.reduction != LossReduction::kNone) BlockPartials(loss_sum, weight_sum, p.workspace);
}

// The partials summed in block order; the loss (sum or mean), and the weight total for the
// gradient at workspace[2·kLossBlocks].
template <typename O>
__global__ void LossFinishKernel(LossProblem p, int blocks, O* loss) {
  double l = 0, w = 0;
  for (int b = 0; b < blocks; ++b) {
    l += p.workspace[2 * b];
    w += p.workspace[2 * b + 1];
  }
  p.workspace[2 * kLossBlocks] = w;
  if (loss != nullptr) {
    *loss = Store<O>(static_cast<Arith<O>>(p.reduction == LossReduction::kMean ? l / w : l));
  }
}

// Per-block sums of the weights of the samples (the gradient's mean).
template <typename T, typename L>
__global__ void WeightPartialsKernel(LossProblem p) {
  double w = 0;
  for (int64_t s = GlobalThread(); s < p.n * p.d; s += GridThreads()) {
    int64_t label = 0;
    w += LabelWeight<T, L>(p, s, &label);
  }
  w = WarpSum(w);
  BlockPartials(0.0, w, p.workspace);
}

template <typename T, typename O, typename L>
__global__ void LossGradKernel(LossProblem p, const T* dy, const T* log_prob, const O* bias,
                               O* dx) {
  const int64_t total = p.n * p.c * p.d;
  for (int64_t i = GlobalThread(); i < total; i += GridThreads()) {
    const int64_t n = i / (p.c * p.d), c = (i / p.d) % p.c, s = n * p.d + i % p.d;
    int64_t label = 0;
    const double w = LabelWeight<T, L>(p, s, &label);
    double v = 0;
    if (w != 0) {
      double g = w * (double)Load(dy[p.reduction == LossReduction::kNone ? s : 0]);
      if (p.reduction == LossReduction::kMean) g /= p.workspace[2 * kLossBlocks];
      v = g * (exp((double)Load(log_prob[i])) - (c == label ? 1.0 : 0.0));
    }
    if (bias != nullptr) v += (double)Load(bias[i]);
    dx[i] = Store<O>(static_cast<Arith<O>>(v));
  }
}

// Calls fn(T{}, O{}, L{}) for the problem's dtypes.
template <typename Fn>
cudaError_t DispatchLoss(const LossProblem& p, Fn&& fn) {
  return DispatchDtypes(FloatDtypes{}, p.dtype, [&](auto t) {
    return DispatchDtypes(FloatDtypes{}, p.out_dtype, [&](auto o) {
      return DispatchDtype<int32_t, int64_t>(p.label_dtype, [&](auto l) { return fn(t, o, l); });
    });
  });
}

unsigned RowBlocks(int64_t samples) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>(kLossBlocks, (samples + kWarps - 1) / kWarps)));
}

}  // namespace

cudaError_t LaunchLoss(const LossProblem& p, bool softmax, const void* scores, void* loss,
                       void* log_prob, cudaStream_t stream) {
  if (p.n * p.d == 0) return cudaSuccess;
  return DispatchLoss(p, [&](auto t, auto o, auto l) {
    using T = decltype(t);
    using O = decltype(o);
    const unsigned blocks = RowBlocks(p.n * p.d);
    LossRowsKernel<T, O, decltype(l)>
        <<<blocks, kBlock, 0, stream>>>(p, softmax, static_cast<const T*>(scores),
                                        static_cast<O*>(loss), static_cast<T*>(log_prob));
    if (p.reduction != LossReduction::kNone) {
      LossFinishKernel<O><<<1, 1, 0, stream>>>(p, static_cast<int>(blocks), static_cast<O*>(loss));
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchLossGrad(const LossProblem& p, const void* dy, const void* log_prob,
                           const void* bias, void* d_logits, cudaStream_t stream) {
  const int64_t total = p.n * p.c * p.d;
  if (total == 0) return cudaSuccess;
  return DispatchLoss(p, [&](auto t, auto o, auto l) {
    using T = decltype(t);
    using O = decltype(o);
    using L = decltype(l);
    if (p.reduction == LossReduction::kMean) {
      const auto blocks = static_cast<unsigned>(
          std::min<int64_t>(kLossBlocks, std::max<int64_t>(1, (p.n * p.d + kBlock - 1) / kBlock)));
      WeightPartialsKernel<T, L><<<blocks, kBlock, 0, stream>>>(p);
      LossFinishKernel<O><<<1, 1, 0, stream>>>(p, static_cast<int>(blocks), nullptr);
    }
    LossGradKernel<T, O, L><<<GridFor(total), kBlock, 0, stream>>>(
        p, static_cast<const T*>(dy), static_cast<const T*>(log_prob), static_cast<const O*>(bias),
        static_cast<O*>(d_logits));
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
