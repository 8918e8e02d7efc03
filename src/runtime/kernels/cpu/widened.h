#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_WIDENED_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_WIDENED_H_

// fp32 copies of fp16 and bf16 tensors, for the BLAS products, which take no 16-bit floats: the
// product runs in fp32 and its result rounds once into the output.

#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

template <typename T>
std::vector<float> Widened(const DeviceTensor& tensor) {
  const T* data = tensor.data_as<const T>();
  std::vector<float> out(static_cast<size_t>(tensor.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = Load(data[i]);
  return out;
}

template <typename T>
void StoreNarrowed(const std::vector<float>& values, const DeviceTensor& tensor) {
  T* data = tensor.data_as<T>();
  for (size_t i = 0; i < values.size(); ++i) data[i] = Store<T>(values[i]);
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CPU_WIDENED_H_
