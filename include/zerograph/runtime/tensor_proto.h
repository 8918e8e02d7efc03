#ifndef ZEROGRAPH_RUNTIME_TENSOR_PROTO_H_
#define ZEROGRAPH_RUNTIME_TENSOR_PROTO_H_

#include <cstddef>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace zerograph::runtime {

// An ONNX tensor's element type, shape and bytes (little-endian, row-major) on the host.
struct HostTensorData {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  std::vector<std::byte> bytes;
};

// Reads raw_data or the typed fields. External data and string tensors are refused.
StatusOr<HostTensorData> ReadTensorProto(const onnx::TensorProto& proto);

// A new tensor on `device` holding an ONNX TensorProto's data (raw_data or the typed fields), as
// in the `input_N.pb` files of ONNX's backend tests and Constant's `value`. External data and
// string tensors are refused.
StatusOr<DeviceTensor> TensorFromProto(const onnx::TensorProto& proto, Device& device);

// Writes `tensor` into `proto` (dims, data_type, raw_data), leaving its name as it is.
Status TensorToProto(const DeviceTensor& tensor, onnx::TensorProto& proto);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_TENSOR_PROTO_H_
