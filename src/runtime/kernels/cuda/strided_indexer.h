#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_STRIDED_INDEXER_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_STRIDED_INDEXER_H_

#include <cstdint>

namespace zerograph::runtime::cuda {

// Where element `linear` of a row-major walk over `dims` lies in each operand, given the
// operand's strides (0 along broadcast dimensions): a kernel parameter, built on the host from a
// collapsed BroadcastPlan, so the device divides by few dimensions.
struct StridedIndexer {
  static constexpr int kMaxDims = 8;
  static constexpr int kMaxOperands = 3;
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
};

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_STRIDED_INDEXER_H_
