#include "zerograph/runtime/tensor_proto.h"

#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {
namespace {

// Appends the low `size` bytes of each value, little-endian (the hosts we build for are).
template <typename Field>
void AppendAll(std::vector<std::byte>& out, const Field& field, size_t size) {
  for (auto value : field) {
    const auto* bytes = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), bytes, bytes + size);
  }
}

}  // namespace

StatusOr<HostTensorData> ReadTensorProto(const onnx::TensorProto& proto) {
  const std::string name = proto.name().empty() ? "tensor" : StrCat("tensor '", proto.name(), "'");
  ZG_RETURN_IF_NOT(proto.data_location() != onnx::TensorProto::EXTERNAL, name,
                   " has external data, which is not read here");
  std::optional<DataType> dtype = DataTypeFromOnnx(proto.data_type());
  ZG_RETURN_IF_NOT(dtype && ElementSize(*dtype) > 0, name, " has unsupported data type ",
                   proto.data_type());
  HostTensorData data;
  data.dtype = *dtype;
  data.shape.assign(proto.dims().begin(), proto.dims().end());
  for (int64_t d : data.shape) ZG_RETURN_IF_NOT(d >= 0, name, " has a negative dimension");
  const size_t element_size = ElementSize(*dtype);
  if (proto.has_raw_data()) {
    const auto* raw = reinterpret_cast<const std::byte*>(proto.raw_data().data());
    data.bytes.assign(raw, raw + proto.raw_data().size());
  } else {
    switch (*dtype) {
      case DataType::kFloat32:
        AppendAll(data.bytes, proto.float_data(), 4);
        break;
      case DataType::kFloat64:
        AppendAll(data.bytes, proto.double_data(), 8);
        break;
      case DataType::kInt64:
        AppendAll(data.bytes, proto.int64_data(), 8);
        break;
      case DataType::kUint32:
      case DataType::kUint64:
        AppendAll(data.bytes, proto.uint64_data(), element_size);
        break;
      default:  // int32_data holds one element per entry for every narrower type
        AppendAll(data.bytes, proto.int32_data(), element_size);
        break;
    }
  }
  const size_t expected = static_cast<size_t>(NumElements(data.shape)) * element_size;
  ZG_RETURN_IF_NOT(data.bytes.size() == expected, name, " holds ", data.bytes.size(),
                   " bytes, but ", DataTypeName(*dtype), ShapeToString(data.shape), " needs ",
                   expected);
  return data;
}

StatusOr<DeviceTensor> TensorFromProto(const onnx::TensorProto& proto, Device& device) {
  ZG_ASSIGN_OR_RETURN(HostTensorData data, ReadTensorProto(proto));
  ZG_ASSIGN_OR_RETURN(DeviceTensor tensor,
                      DeviceTensor::Allocate(device, data.dtype, std::move(data.shape)));
  ZG_RETURN_IF_ERROR(device.CopyFromHost(data.bytes, tensor));
  return tensor;
}

Status TensorToProto(const DeviceTensor& tensor, onnx::TensorProto& proto) {
  ZG_RETURN_IF_NOT(!tensor.empty() && tensor.is_contiguous(), "cannot write ", tensor.ToString(),
                   " (empty or strided)");
  proto.clear_dims();
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  std::string raw(tensor.byte_size(), '\0');
  ZG_RETURN_IF_ERROR(tensor.device().CopyToHost(
      tensor, std::span<std::byte>(reinterpret_cast<std::byte*>(raw.data()), raw.size())));
  proto.clear_float_data();
  proto.clear_double_data();
  proto.clear_int32_data();
  proto.clear_int64_data();
  proto.clear_uint64_data();
  proto.set_raw_data(std::move(raw));
  return Status::Ok();
}

}  // namespace zerograph::runtime
