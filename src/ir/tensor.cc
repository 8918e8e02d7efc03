#include "zerograph/ir/tensor.h"

#include <mutex>

#include <onnx/onnx_pb.h>

#include "zerograph/core/num_elements.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

// Appends the low `size` bytes of `value`, little-endian (the hosts we build for are
// little-endian).
template <typename T>
void AppendLittleEndian(std::vector<std::byte>& out, T value, size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), bytes, bytes + size);
}

template <typename Field>
void AppendAll(std::vector<std::byte>& out, const Field& field, size_t element_size) {
  for (auto v : field) AppendLittleEndian(out, v, element_size);
}

}  // namespace

Tensor::~Tensor() = default;

std::string_view Tensor::name() const { return proto_->name(); }

Status Tensor::Attach(onnx::TensorProto* proto) {
  proto_ = proto;
  dtype_ = DataTypeFromOnnx(proto->data_type()).value_or(DataType::kUndefined);
  ZG_ASSIGN_OR_RETURN(numel_, CheckedNumElements(dims()));
  return Status::Ok();
}

std::span<const int64_t> Tensor::dims() const {
  return {proto_->dims().data(), static_cast<size_t>(proto_->dims_size())};
}

StatusOr<std::span<const std::byte>> Tensor::Bytes() const {
  if (is_external()) return external_bytes_;
  const size_t element_size = ElementSize(dtype());
  ZG_RETURN_IF_NOT(element_size > 0, "tensor '", name(), "' has element type ",
                   DataTypeName(dtype()), ", which has no fixed-size byte layout");
  const size_t expected = static_cast<size_t>(numel()) * element_size;
  if (fused_ == nullptr && proto_->has_raw_data()) {
    const std::string& raw = proto_->raw_data();
    ZG_RETURN_IF_NOT(raw.size() == expected, "tensor '", name(), "' holds ", raw.size(),
                     " bytes of raw data, but its shape and type need ", expected);
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(raw.data()), raw.size());
  }
  if (!converted_valid_.load(std::memory_order_acquire)) {
    // Fused bytes are made before the lock is taken: making them reads the sources' bytes, which
    // may need converting under it.
    std::vector<std::byte> made;
    if (fused_ != nullptr) {
      ZG_RET_CHECK(fused_->size() == expected, "tensor '", name(), "' is fused from ",
                   fused_->size(), " bytes, but its shape and type need ", expected);
      made.resize(expected);
      ZG_RETURN_IF_ERROR(
          fused_->Fill(made).WithContext(StrCat("making fused tensor '", name(), "'")));
    }
    // One lock for every tensor: few tensors hold typed data or fused bytes, and each converts
    // once.
    static std::mutex conversion;
    std::lock_guard<std::mutex> lock(conversion);
    if (converted_valid_.load(std::memory_order_relaxed)) {
      return std::span<const std::byte>(converted_);
    }
    if (fused_ != nullptr) {
      converted_ = std::move(made);
      converted_valid_.store(true, std::memory_order_release);
      return std::span<const std::byte>(converted_);
    }
    std::vector<std::byte> out;
    out.reserve(expected);
    switch (dtype()) {
      case DataType::kFloat32:
      case DataType::kComplex64:
        AppendAll(out, proto_->float_data(), 4);
        break;
      case DataType::kFloat64:
      case DataType::kComplex128:
        AppendAll(out, proto_->double_data(), 8);
        break;
      case DataType::kInt64:
        AppendAll(out, proto_->int64_data(), 8);
        break;
      case DataType::kUint32:
      case DataType::kUint64:
        AppendAll(out, proto_->uint64_data(), element_size);
        break;
      default:  // int32_data holds one element per entry for every narrower type
        AppendAll(out, proto_->int32_data(), element_size);
        break;
    }
    ZG_RETURN_IF_NOT(out.size() == expected, "tensor '", name(), "' holds ",
                     out.size() / element_size, " typed elements, but its shape needs ", numel());
    converted_ = std::move(out);
    converted_valid_.store(true, std::memory_order_release);
  }
  return std::span<const std::byte>(converted_);
}

}  // namespace zerograph
