#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_DTYPE_LIST_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_DTYPE_LIST_H_

// The dtypes a kernel family takes, declared once as a type: the CPU and CUDA code instantiate
// their kernels for each of them, and the registrations list the same ones. Compiled by the host
// compiler and by nvcc.

#include <algorithm>
#include <iterator>
#include <vector>

#include "zerograph/ir/dtype.h"

namespace zerograph::runtime {

template <DataType... Ds>
struct DtypeList {
  static constexpr DataType kValues[] = {Ds...};

  static bool Contains(DataType dtype) {
    return std::find(std::begin(kValues), std::end(kValues), dtype) != std::end(kValues);
  }
  // For a KernelDef.
  static std::vector<DataType> Vector() { return {Ds...}; }
};

using FloatDtypes =
    DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16>;
using NumericDtypes = DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                                DataType::kBFloat16, DataType::kInt32, DataType::kInt64>;
// Gradients of the 16-bit and 32-bit floats.
using GradientDtypes = DtypeList<DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16>;
// Cast's sources and targets.
using CastDtypes = DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                             DataType::kBFloat16, DataType::kInt64, DataType::kInt32,
                             DataType::kInt8, DataType::kUint8, DataType::kBool>;

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_DTYPE_LIST_H_
