#ifndef ZEROGRAPH_IR_TENSOR_H_
#define ZEROGRAPH_IR_TENSOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/core/mapped_file.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/fused_bytes.h"
#include "zerograph/ir/graph_key.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace zerograph {

// The data of an initializer. Bytes are never copied on load: inline `raw_data` stays in the parsed
// message, external data stays in a read-only mapping of its file. Typed fields (`float_data`, ...)
// are converted to little-endian bytes on first use, as are a fused initializer's bytes (made from
// other tensors, FusedBytes), which the writer otherwise streams into the file.
class Tensor {
 public:
  explicit Tensor(GraphKey) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor();

  std::string_view name() const;
  DataType dtype() const { return dtype_; }
  std::span<const int64_t> dims() const;
  int64_t numel() const { return numel_; }
  int64_t byte_size() const { return numel() * static_cast<int64_t>(ElementSize(dtype())); }

  // True when the bytes live in an external data file next to the model.
  bool is_external() const { return external_file_ != nullptr; }
  // The bytes' recipe when they are made from other tensors, else null: the message then holds no
  // data.
  const FusedBytes* fused_bytes() const { return fused_.get(); }

  // The tensor's bytes in ONNX's raw layout (little-endian, row-major). Fails for string tensors
  // and for typed data whose length does not match the shape. Safe to call from several threads
  // (the sweeps that read a graph in parallel read shapes from initializers).
  StatusOr<std::span<const std::byte>> Bytes() const;

  // The underlying message (for the ONNX writer).
  const onnx::TensorProto& proto() const { return *proto_; }

 private:
  friend class Graph;

  // Makes `proto` the tensor's message and reads its type; fails when the shape has a negative
  // dimension or more elements than int64 counts (numel() multiplies the dimensions unchecked).
  Status Attach(onnx::TensorProto* proto);

  onnx::TensorProto* proto_ = nullptr;
  // For external data: the mapping and this tensor's byte range in it.
  std::shared_ptr<const MappedFile> external_file_;
  std::span<const std::byte> external_bytes_;
  std::shared_ptr<const FusedBytes> fused_;
  // Typed data converted to raw bytes, or fused bytes made, on the first Bytes() call; `converted_`
  // is written once, before `converted_valid_` is set.
  mutable std::vector<std::byte> converted_;
  mutable std::atomic<bool> converted_valid_{false};
  // Read from the message once (Attach): an initializer's type and shape never change, and the
  // passes read them for every parameter and state, a cache miss each in a large model's
  // messages. The dtype last, in the flag's padding: a large model has a million tensors.
  int64_t numel_ = 0;
  DataType dtype_ = DataType::kUndefined;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_TENSOR_H_
