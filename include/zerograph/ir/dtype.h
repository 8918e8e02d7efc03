#ifndef ZEROGRAPH_IR_DTYPE_H_
#define ZEROGRAPH_IR_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zerograph {

// Element types, numbered as ONNX's TensorProto.DataType so that conversion is a cast.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// Bytes per element; 0 for kUndefined and kString, which have no fixed size.
size_t ElementSize(DataType dtype);

// ONNX's spelling: "float", "float16", "bfloat16", "int64", ...
std::string_view DataTypeName(DataType dtype);

// The DataType for an ONNX TensorProto.DataType number, if it is one we know.
std::optional<DataType> DataTypeFromOnnx(int32_t onnx_type);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_DTYPE_H_
