#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_ELEMENTWISE_ATTR_LAUNCH_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_ELEMENTWISE_ATTR_LAUNCH_H_

// Launchers of the CUDA kernels of elementwise_attr_ops.h and ONNX Runtime's element-wise
// gradients (elementwise_attr.cu), plain C++ so the kernel classes compile with the host compiler.
// Each enqueues on `stream` and returns cudaGetLastError(); cudaErrorNotSupported means no code
// for the dtype. n == 0 launches nothing. A null `broadcast` means every operand has the output's
// shape.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/kernels/cuda/strided_indexer.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime::cuda {

// The one-input maps: y[i] = f(x[i]) with f's parameters p0, p1.
enum class MapOp {
  kLeakyRelu,  // alpha = p0
  kClip,       // bounds p0, p1 (Clip-6's attributes)
  kGeluExact,
  kGeluTanh,
  kScale,  // x·p0 (Mean's 1/n, ONNX Runtime's Scale)
};
cudaError_t LaunchMap(MapOp op, DataType dtype, double p0, double p1, const void* x, void* y,
                      int64_t n, cudaStream_t stream);

// Clip-11: bounds are host pointers to one element of `dtype`, null where absent.
cudaError_t LaunchClip(DataType dtype, const void* lo, const void* hi, const void* x, void* y,
                       int64_t n, cudaStream_t stream);

// out = step(a, b) broadcast, `step` the index in elementwise::VariadicSteps (Add, MaxOf, MinOf).
cudaError_t LaunchVariadicStep(size_t step, DataType dtype, const void* a, const void* b, void* out,
                               int64_t n, const StridedIndexer* broadcast, cudaStream_t stream);

// Pow of a `base` dtype by an `exponent` dtype, broadcast; the output has the base's dtype.
cudaError_t LaunchPow(DataType base, DataType exponent, const void* a, const void* b, void* out,
                      int64_t n, const StridedIndexer* broadcast, cudaStream_t stream);

// Mod, broadcast: the dividend's sign (fmod) or the divisor's.
cudaError_t LaunchMod(DataType dtype, bool fmod, const void* a, const void* b, void* out, int64_t n,
                      const StridedIndexer* broadcast, cudaStream_t stream);

// out = condition ? x : y for elements of `element_size` bytes; `broadcast` has three operands.
cudaError_t LaunchWhere(size_t element_size, const bool* condition, const void* x, const void* y,
                        void* out, int64_t n, const StridedIndexer* broadcast, cudaStream_t stream);

// dx = dy · Gelu'(x + b[i % width]).
cudaError_t LaunchBiasGeluGrad(DataType dtype, const void* dy, const void* x, const void* b,
                               void* dx, int64_t n, int64_t width, cudaStream_t stream);

// One gradient of DivGrad: grad[j] for each of its n elements sums over `reduced` (count
// elements) the terms of dY's elements that broadcast from it. `kept` and `reduced` walk
// operands 0 = dY and 1 = the other input (B for dA, A for dB).
cudaError_t LaunchDivGrad(DataType dtype, bool of_a, const void* dy, const void* other,
                          const void* self, void* grad, int64_t n, const StridedIndexer& kept,
                          const StridedIndexer& reduced, int64_t count, cudaStream_t stream);

}  // namespace zerograph::runtime::cuda

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_CUDA_ELEMENTWISE_ATTR_LAUNCH_H_
