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
// The IEEE formats only (ONNX's trigonometric ops take no bfloat16).
using IeeeFloatDtypes = DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16>;
using NumericDtypes = DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                                DataType::kBFloat16, DataType::kInt32, DataType::kInt64>;
// ONNX's numeric types (Max, Min, Mod, Abs, Add): every integer width and the floats.
using AllNumericDtypes =
    DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
              DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64,
              DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64>;
// The signed ones (Neg, Relu).
using SignedNumericDtypes =
    DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
              DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64>;
// Equal: the numbers and bool.
using EqualityDtypes =
    DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
              DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64,
              DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64,
              DataType::kBool>;
using BoolDtypes = DtypeList<DataType::kBool>;
// What parameters, gradients and their collectives are kept in.
using GradientDtypes = DtypeList<DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16>;
// ONNX's training optimizers (their T3).
using RateDtypes = DtypeList<DataType::kFloat32, DataType::kFloat64>;
// Every fixed-size dtype: the kernels that move bytes (Identity, Reshape, Transpose, views).
using AllDtypes = DtypeList<DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                            DataType::kFloat64, DataType::kInt64, DataType::kInt32, DataType::kInt8,
                            DataType::kUint8, DataType::kBool, DataType::kInt16, DataType::kUint16,
                            DataType::kUint32, DataType::kUint64>;
// Cast's sources and targets.
using CastDtypes = DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                             DataType::kBFloat16, DataType::kInt64, DataType::kInt32,
                             DataType::kInt8, DataType::kUint8, DataType::kBool>;

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_DTYPE_LIST_H_
