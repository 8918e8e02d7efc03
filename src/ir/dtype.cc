#include "zerograph/ir/dtype.h"

namespace zerograph {

size_t ElementSize(DataType dtype) {
  switch (dtype) {
    case DataType::kUndefined:
    case DataType::kString:
      return 0;
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kBool:
      return 1;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUint32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
    case DataType::kComplex64:
      return 8;
    case DataType::kComplex128:
      return 16;
  }
  return 0;
}

std::string_view DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kUndefined:
      return "undefined";
    case DataType::kFloat32:
      return "float";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt8:
      return "int8";
    case DataType::kUint16:
      return "uint16";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kString:
      return "string";
    case DataType::kBool:
      return "bool";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat64:
      return "double";
    case DataType::kUint32:
      return "uint32";
    case DataType::kUint64:
      return "uint64";
    case DataType::kComplex64:
      return "complex64";
    case DataType::kComplex128:
      return "complex128";
    case DataType::kBFloat16:
      return "bfloat16";
  }
  return "unknown";
}

std::optional<DataType> DataTypeFromOnnx(int32_t onnx_type) {
  if (onnx_type < 0 || onnx_type > static_cast<int32_t>(DataType::kBFloat16)) return std::nullopt;
  return static_cast<DataType>(onnx_type);
}

}  // namespace zerograph
