#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_DROPOUT_MASK_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_DROPOUT_MASK_H_

// Dropout's mask from a counter-based hash of (seed, step, rank, element index), so that the CPU
// and CUDA kernels draw the same mask, each element on its own, with no generator state to save
// in checkpoints. Compiled by the host compiler and by nvcc.

#include <cstdint>

#if defined(__CUDACC__)
#define ZG_HOST_DEVICE __host__ __device__
#else
#define ZG_HOST_DEVICE
#endif

namespace zerograph::runtime {

// splitmix64's finalizer: a bijection of 64-bit words whose outputs pass as independent.
ZG_HOST_DEVICE inline uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The key of one dropout node's mask at one step on one rank.
ZG_HOST_DEVICE inline uint64_t DropoutKey(uint64_t seed, int64_t step, int rank) {
  return Mix64(Mix64(Mix64(seed) ^ static_cast<uint64_t>(step)) ^ static_cast<uint64_t>(rank));
}

// 24-bit uniforms: ratio compares as an integer threshold, identically on every device.
constexpr int kDropoutBits = 24;
inline uint32_t DropoutThreshold(double ratio) {
  return static_cast<uint32_t>(ratio * double(1u << kDropoutBits) + 0.5);
}

// Whether element `index` is kept: its uniform in [0, 2^24) is at least the threshold.
ZG_HOST_DEVICE inline bool DropoutKeeps(uint64_t key, int64_t index, uint32_t threshold) {
  const uint64_t bits = Mix64(key + static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL);
  return static_cast<uint32_t>(bits >> (64 - kDropoutBits)) >= threshold;
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_DROPOUT_MASK_H_
