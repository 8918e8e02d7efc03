#ifndef ZEROGRAPH_RUNTIME_DEVICE_TENSOR_H_
#define ZEROGRAPH_RUNTIME_DEVICE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zerograph/core/num_elements.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/tensor_spec.h"
#include "zerograph/runtime/buffer.h"

namespace zerograph::runtime {

class Device;

using zerograph::Shape;
using zerograph::ShapeToString;

// A typed, shaped window on a device buffer: what kernels read and write at run time (the IR's
// zerograph::Tensor is an initializer's stored bytes). Copying a DeviceTensor makes another view
// of the same memory, never a copy of the data. Views at an element offset, reshapes and slices
// cost nothing, which is how parameters live inside fused buckets. Strides count elements; kernels
// take contiguous tensors (row-major, no gaps), which every view but a Slice of an inner axis is.
class DeviceTensor {
 public:
  // An empty tensor: no buffer (stands for an omitted optional input).
  DeviceTensor() = default;
  // A contiguous tensor over `buffer` from `byte_offset`; the range must fit in the buffer.
  static StatusOr<DeviceTensor> Create(std::shared_ptr<Buffer> buffer, size_t byte_offset,
                                       DataType dtype, Shape shape);
  // A new contiguous tensor in its own buffer on `device` (contents undefined).
  static StatusOr<DeviceTensor> Allocate(Device& device, DataType dtype, Shape shape);

  bool empty() const { return buffer_ == nullptr; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t axis) const { return shape_[static_cast<size_t>(axis)]; }
  int64_t numel() const { return numel_; }
  size_t element_size() const { return ElementSize(dtype_); }
  // Bytes spanned by the elements of a contiguous tensor.
  size_t byte_size() const { return static_cast<size_t>(numel_) * element_size(); }
  bool is_contiguous() const;
  // The tensor as shape inference reads a known value; the device must be host accessible.
  HostValue host_value() const {
    return HostValue{dtype_, shape_, {static_cast<const std::byte*>(data()), byte_size()}};
  }

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  Device& device() const { return buffer_->device(); }
  // Where element 0 starts in the buffer.
  size_t byte_offset() const { return byte_offset_; }
  // The address of element 0 (a device address; see Device::host_accessible()).
  void* data() const { return static_cast<std::byte*>(buffer_->data()) + byte_offset_; }
  // Typed access for kernels that know their element type.
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data());
  }

  // A contiguous tensor of `shape` over elements [offset, offset + numel(shape)) of this
  // contiguous tensor (a parameter inside a 1-D fused buffer).
  StatusOr<DeviceTensor> View(int64_t element_offset, Shape shape) const;
  // The same elements with another shape (contiguous tensors only).
  StatusOr<DeviceTensor> Reshape(Shape shape) const;
  // Indices [start, stop) of `axis`; not contiguous when `axis` is not the outermost non-1 axis.
  StatusOr<DeviceTensor> Slice(int64_t axis, int64_t start, int64_t stop) const;

  // "float[2,3]".
  std::string ToString() const;

 private:
  std::shared_ptr<Buffer> buffer_;
  size_t byte_offset_ = 0;
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  Shape strides_;
  int64_t numel_ = 0;
};

// Row-major strides of a contiguous tensor of `shape`, in elements.
Shape ContiguousStrides(std::span<const int64_t> shape);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_DEVICE_TENSOR_H_
