#include "zerograph/ir/value.h"

#include <onnx/onnx_pb.h>

#include "zerograph/ir/tensor.h"

namespace zerograph {

std::optional<TensorType> Value::type() const {
  if (initializer_ != nullptr) {
    std::span<const int64_t> dims = initializer_->dims();
    return TensorType{initializer_->dtype(), std::vector<int64_t>(dims.begin(), dims.end())};
  }
  if (info_ == nullptr || !info_->type().has_tensor_type()) return std::nullopt;
  const onnx::TypeProto::Tensor& tensor = info_->type().tensor_type();
  TensorType type;
  type.dtype = DataTypeFromOnnx(tensor.elem_type()).value_or(DataType::kUndefined);
  if (tensor.has_shape()) {
    std::vector<int64_t> dims;
    dims.reserve(tensor.shape().dim_size());
    for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
      dims.push_back(dim.has_dim_value() ? dim.dim_value() : TensorType::kUnknownDim);
    }
    type.dims = std::move(dims);
  }
  return type;
}

DataType Value::dtype() const {
  if (initializer_ != nullptr) return initializer_->dtype();
  if (info_ == nullptr || !info_->type().has_tensor_type()) return DataType::kUndefined;
  return DataTypeFromOnnx(info_->type().tensor_type().elem_type()).value_or(DataType::kUndefined);
}

std::vector<std::string_view> Value::dim_params() const {
  std::vector<std::string_view> names;
  if (initializer_ != nullptr || info_ == nullptr || !info_->type().has_tensor_type()) return names;
  for (const onnx::TensorShapeProto::Dimension& dim : info_->type().tensor_type().shape().dim()) {
    names.emplace_back(dim.has_dim_param() ? std::string_view(dim.dim_param())
                                           : std::string_view());
  }
  return names;
}

}  // namespace zerograph
