#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_LOSS_REDUCTION_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_LOSS_REDUCTION_H_

// The losses' `reduction`, shared by the kernel classes and the C++17 CUDA launchers.

namespace zerograph::runtime {

enum class LossReduction { kNone, kSum, kMean };

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_LOSS_REDUCTION_H_
