#include "zerograph/runtime/device_tensor.h"

#include <utility>

#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/device.h"

namespace zerograph::runtime {

Shape ContiguousStrides(std::span<const int64_t> shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

StatusOr<DeviceTensor> DeviceTensor::Create(std::shared_ptr<Buffer> buffer, size_t byte_offset,
                                            DataType dtype, Shape shape) {
  ZG_RETURN_IF_NOT(buffer != nullptr, "tensor over a null buffer");
  ZG_RETURN_IF_NOT(ElementSize(dtype) > 0, "tensor of dtype ", DataTypeName(dtype),
                   " (no fixed element size)");
  for (int64_t d : shape) {
    ZG_RETURN_IF_NOT(d >= 0, "negative dimension in shape ", ShapeToString(shape));
  }
  DeviceTensor t;
  t.numel_ = NumElements(shape);
  const size_t bytes = static_cast<size_t>(t.numel_) * ElementSize(dtype);
  ZG_RETURN_IF_NOT(byte_offset <= buffer->size() && bytes <= buffer->size() - byte_offset,
                   DataTypeName(dtype), ShapeToString(shape), " at byte ", byte_offset,
                   " does not fit in a buffer of ", buffer->size(), " bytes");
  t.buffer_ = std::move(buffer);
  t.byte_offset_ = byte_offset;
  t.dtype_ = dtype;
  t.strides_ = ContiguousStrides(shape);
  t.shape_ = std::move(shape);
  return t;
}

StatusOr<DeviceTensor> DeviceTensor::Allocate(Device& device, DataType dtype, Shape shape) {
  ZG_RETURN_IF_NOT(ElementSize(dtype) > 0, "cannot allocate a tensor of dtype ",
                   DataTypeName(dtype));
  for (int64_t d : shape) {
    ZG_RETURN_IF_NOT(d >= 0, "negative dimension in shape ", ShapeToString(shape));
  }
  ZG_ASSIGN_OR_RETURN(
      std::shared_ptr<Buffer> buffer,
      device.Allocate(static_cast<size_t>(NumElements(shape)) * ElementSize(dtype)));
  return Create(std::move(buffer), 0, dtype, std::move(shape));
}

bool DeviceTensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

StatusOr<DeviceTensor> DeviceTensor::View(int64_t element_offset, Shape shape) const {
  ZG_RETURN_IF_NOT(!empty(), "view of an empty tensor");
  ZG_RETURN_IF_NOT(is_contiguous(), "view of a non-contiguous tensor ", ToString());
  for (int64_t d : shape) {
    ZG_RETURN_IF_NOT(d >= 0, "negative dimension in view shape ", ShapeToString(shape));
  }
  const int64_t n = NumElements(shape);
  ZG_RETURN_IF_NOT(element_offset >= 0 && element_offset <= numel_ && n <= numel_ - element_offset,
                   "view ", ShapeToString(shape), " at element ", element_offset,
                   " does not fit in ", ToString());
  DeviceTensor t = *this;
  t.byte_offset_ = byte_offset_ + static_cast<size_t>(element_offset) * element_size();
  t.strides_ = ContiguousStrides(shape);
  t.shape_ = std::move(shape);
  t.numel_ = n;
  return t;
}

StatusOr<DeviceTensor> DeviceTensor::Reshape(Shape shape) const {
  ZG_RETURN_IF_NOT(NumElements(shape) == numel_, "cannot reshape ", ToString(), " to ",
                   ShapeToString(shape));
  return View(0, std::move(shape));
}

StatusOr<DeviceTensor> DeviceTensor::Slice(int64_t axis, int64_t start, int64_t stop) const {
  ZG_RETURN_IF_NOT(!empty(), "slice of an empty tensor");
  ZG_RETURN_IF_NOT(axis >= 0 && axis < rank(), "slice axis ", axis, " out of range for ",
                   ToString());
  const size_t a = static_cast<size_t>(axis);
  ZG_RETURN_IF_NOT(0 <= start && start <= stop && stop <= shape_[a], "slice [", start, ", ", stop,
                   ") of axis ", axis, " out of range for ", ToString());
  DeviceTensor t = *this;
  t.byte_offset_ = byte_offset_ + static_cast<size_t>(start * strides_[a]) * element_size();
  t.shape_[a] = stop - start;
  t.numel_ = NumElements(t.shape_);
  return t;
}

std::string DeviceTensor::ToString() const {
  return StrCat(DataTypeName(dtype_), ShapeToString(shape_));
}

}  // namespace zerograph::runtime
