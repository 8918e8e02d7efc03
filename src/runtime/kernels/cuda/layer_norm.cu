// LayerNormalization, SimplifiedLayerNormalization and their gradients: a block per row for the
// row statistics and dx (sums in double, as on the CPU), a block per 32 row elements for the
// parameter gradients (summing down the rows, neighbouring threads reading neighbouring columns).

#include <cstdint>

#include "runtime/kernels/cuda/block_reduce.cuh"
#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/layer_norm_launch.h"

namespace zerograph::runtime::cuda {
namespace {

template <bool kRms, typename T>
__global__ void LayerNormKernel(const T* x, const T* scale, const T* bias, T* y, float* mean_out,
                                float* inv_out, int64_t rows, int64_t n, double epsilon) {
  __shared__ double scratch[kRowBlock / 32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    double sum = 0, sum_sq = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double v = static_cast<double>(Load(row[j]));
      sum += v;
      sum_sq += v * v;
    }
    sum = BlockReduce(sum, SumOf(), scratch);
    sum_sq = BlockReduce(sum_sq, SumOf(), scratch);
    const double mean = kRms ? 0.0 : sum / static_cast<double>(n);
    const double variance = fmax(0.0, sum_sq / static_cast<double>(n) - mean * mean);
    const double inv = rsqrt(variance + epsilon);
    T* out = y + r * n;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      double v =
          (static_cast<double>(Load(row[j])) - mean) * inv * static_cast<double>(Load(scale[j]));
      if (bias != nullptr) v += static_cast<double>(Load(bias[j]));
      out[j] = Store<T>(static_cast<Arith<T>>(v));
    }
    if (threadIdx.x == 0) {
      if (mean_out != nullptr) mean_out[r] = static_cast<float>(mean);
      if (inv_out != nullptr) inv_out[r] = static_cast<float>(inv);
    }
  }
}

// dx = inv · (g - mean(g) - x̂ · mean(g · x̂)), g = dy · scale (kRms: no mean(g) term).
template <bool kRms, typename T>
__global__ void LayerNormGradInputKernel(const T* dy, const T* x, const T* scale, const float* mean,
                                         const float* inv_std, T* dx, int64_t rows, int64_t n) {
  __shared__ double scratch[kRowBlock / 32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const double mu = kRms ? 0.0 : static_cast<double>(mean[r]);
    const double inv = static_cast<double>(inv_std[r]);
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double g =
          static_cast<double>(Load(dy[r * n + j])) * static_cast<double>(Load(scale[j]));
      sum_g += g;
      sum_gx += g * (static_cast<double>(Load(x[r * n + j])) - mu) * inv;
    }
    sum_g = BlockReduce(sum_g, SumOf(), scratch);
    sum_gx = BlockReduce(sum_gx, SumOf(), scratch);
    const double mean_g = kRms ? 0.0 : sum_g / static_cast<double>(n);
    const double mean_gx = sum_gx / static_cast<double>(n);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double g =
          static_cast<double>(Load(dy[r * n + j])) * static_cast<double>(Load(scale[j]));
      const double xhat = (static_cast<double>(Load(x[r * n + j])) - mu) * inv;
      dx[r * n + j] = Store<T>(static_cast<Arith<T>>(inv * (g - mean_g - xhat * mean_gx)));
    }
  }
}

// dscale[j] = Σ_r dy · x̂, dbias[j] = Σ_r dy. A block per kParamColumns elements of a row: its
// kParamRows rows of threads each sum every kParamRows-th row (neighbouring threads reading
// neighbouring columns), then the first row of threads adds the partial sums.
constexpr int kParamColumns = 32;
constexpr int kParamRows = 16;

template <bool kRms, typename T>
__global__ void LayerNormGradParamsKernel(const T* dy, const T* x, const float* mean,
                                          const float* inv_std, T* dscale, T* dbias, int64_t rows,
                                          int64_t n) {
  __shared__ double partial_scale[kParamRows][kParamColumns];
  __shared__ double partial_bias[kParamRows][kParamColumns];
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kParamColumns + threadIdx.x;
  double sum_scale = 0, sum_bias = 0;
  if (j < n) {
    for (int64_t r = threadIdx.y; r < rows; r += kParamRows) {
      const double mu = kRms ? 0.0 : static_cast<double>(mean[r]);
      const double d = static_cast<double>(Load(dy[r * n + j]));
      sum_scale +=
          d * (static_cast<double>(Load(x[r * n + j])) - mu) * static_cast<double>(inv_std[r]);
      sum_bias += d;
    }
  }
  partial_scale[threadIdx.y][threadIdx.x] = sum_scale;
  partial_bias[threadIdx.y][threadIdx.x] = sum_bias;
  __syncthreads();
  if (threadIdx.y != 0 || j >= n) return;
  for (int i = 1; i < kParamRows; ++i) {
    sum_scale += partial_scale[i][threadIdx.x];
    sum_bias += partial_bias[i][threadIdx.x];
  }
  dscale[j] = Store<T>(static_cast<Arith<T>>(sum_scale));
  if (dbias != nullptr) dbias[j] = Store<T>(static_cast<Arith<T>>(sum_bias));
}

unsigned RowGrid(int64_t rows) { return static_cast<unsigned>(std::min<int64_t>(rows, 65535)); }

}  // namespace

cudaError_t LaunchLayerNorm(DataType dtype, bool rms, const void* x, const void* scale,
                            const void* bias, void* y, float* mean, float* inv_std, int64_t rows,
                            int64_t n, float epsilon, cudaStream_t stream) {
  if (rows * n == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    auto* px = static_cast<const T*>(x);
    auto* ps = static_cast<const T*>(scale);
    auto* pb = static_cast<const T*>(bias);
    auto* py = static_cast<T*>(y);
    if (rms) {
      LayerNormKernel<true, T><<<RowGrid(rows), kRowBlock, 0, stream>>>(px, ps, nullptr, py, mean,
                                                                        inv_std, rows, n, epsilon);
    } else {
      LayerNormKernel<false, T><<<RowGrid(rows), kRowBlock, 0, stream>>>(px, ps, pb, py, mean,
                                                                         inv_std, rows, n, epsilon);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchLayerNormGrad(DataType dtype, bool rms, const void* dy, const void* x,
                                const void* scale, const float* mean, const float* inv_std,
                                void* dx, void* dscale, void* dbias, int64_t rows, int64_t n,
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchDtypes(FloatDtypes{}, dtype, [&](auto tag) {
    using T = decltype(tag);
    auto* pdy = static_cast<const T*>(dy);
    auto* px = static_cast<const T*>(x);
    auto* ps = static_cast<const T*>(scale);
    auto* pdx = static_cast<T*>(dx);
    auto* pds = static_cast<T*>(dscale);
    auto* pdb = static_cast<T*>(dbias);
    if (rows > 0) {
      if (rms) {
        LayerNormGradInputKernel<true, T>
            <<<RowGrid(rows), kRowBlock, 0, stream>>>(pdy, px, ps, mean, inv_std, pdx, rows, n);
      } else {
        LayerNormGradInputKernel<false, T>
            <<<RowGrid(rows), kRowBlock, 0, stream>>>(pdy, px, ps, mean, inv_std, pdx, rows, n);
      }
    }
    const dim3 param_block(kParamColumns, kParamRows);
    const unsigned param_grid = static_cast<unsigned>((n + kParamColumns - 1) / kParamColumns);
    if (rms) {
      LayerNormGradParamsKernel<true, T>
          <<<param_grid, param_block, 0, stream>>>(pdy, px, mean, inv_std, pds, nullptr, rows, n);
    } else {
      LayerNormGradParamsKernel<false, T>
          <<<param_grid, param_block, 0, stream>>>(pdy, px, mean, inv_std, pds, pdb, rows, n);
    }
    return cudaGetLastError();
  });
}

}  // namespace zerograph::runtime::cuda
