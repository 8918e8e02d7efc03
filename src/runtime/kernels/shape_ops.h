#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_SHAPE_OPS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_SHAPE_OPS_H_

// Data movement without arithmetic, shared by every device: Identity, Reshape (0 copies a
// dimension unless allowzero, -1 is inferred; the shape input is read on the host at planning
// time), Transpose (perm, default reversed) and Constant. Identity and Reshape outputs may be
// views of their input. The kernels that only copy are templates on a memory policy
// (HostMemory, CudaMemory: CopyBytes, Zero, CopyFromHost); Transpose's base leaves ComputeImpl to
// the device.

#include <onnx/onnx_pb.h>

#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/runtime/tensor_proto.h"

namespace zerograph::runtime {

template <typename Memory>
class IdentityKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1, "expects 1 input, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    return std::vector<OutputInfo>{OutputInfo{*x, OutputInfo::View{0, 0}}};
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    return Memory::CopyBytes(ctx.inputs[0]->data(), ctx.outputs[0]->data(),
                             ctx.outputs[0]->byte_size(), ctx);
  }
};

// The output shape of Reshape(input, requested) per ONNX opset 14.
inline StatusOr<Shape> ReshapedShape(const Shape& input, const std::vector<int64_t>& requested,
                                     bool allowzero) {
  Shape out(requested.size());
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      ZG_RETURN_IF_NOT(inferred < 0, "shape ", ShapeToString(requested), " has two -1");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (d == 0 && !allowzero) {
      ZG_RETURN_IF_NOT(i < input.size(), "shape ", ShapeToString(requested), " copies dimension ",
                       i, " of ", ShapeToString(input), ", which has none");
      out[i] = input[i];
    } else {
      ZG_RETURN_IF_NOT(d >= 0, "shape ", ShapeToString(requested), " has a negative dimension");
      out[i] = d;
    }
    known *= out[i];
  }
  const int64_t total = NumElements(input);
  if (inferred >= 0) {
    ZG_RETURN_IF_NOT(known != 0 && total % known == 0, "cannot infer -1 in shape ",
                     ShapeToString(requested), " for ", total, " elements");
    out[static_cast<size_t>(inferred)] = total / known;
  }
  ZG_RETURN_IF_NOT(NumElements(out) == total, "cannot reshape ", ShapeToString(input), " to ",
                   ShapeToString(requested));
  return out;
}

template <typename Memory>
class ReshapeKernel final : public OpKernel {
 public:
  static StatusOr<bool> ParseAttrs(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t allowzero, IntAttr(*info.node, "allowzero", 0));
    return allowzero != 0;
  }
  ReshapeKernel(const KernelInfo& info, bool allowzero) : OpKernel(info), allowzero_(allowzero) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 2, "expects 2 inputs, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    const DeviceTensor* shape = ctx.value(1);
    ZG_RETURN_IF_NOT(shape != nullptr, "the shape input must be a constant");
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadInt64Values(*shape, "shape"));
    ZG_ASSIGN_OR_RETURN(Shape out, ReshapedShape(x->shape, requested, allowzero_));
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{x->dtype, out}, OutputInfo::View{0, 0}}};
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    return Memory::CopyBytes(ctx.inputs[0]->data(), ctx.outputs[0]->data(),
                             ctx.outputs[0]->byte_size(), ctx);
  }

 private:
  bool allowzero_;
};

class TransposeKernelBase : public OpKernel {
 public:
  // The `perm` attribute, when given.
  static StatusOr<std::optional<std::vector<int64_t>>> ParseAttrs(const KernelInfo& info) {
    std::optional<std::vector<int64_t>> perm;
    if (info.node->HasAttribute("perm")) {
      ZG_ASSIGN_OR_RETURN(perm, IntsAttr(*info.node, "perm"));
    }
    return perm;
  }
  TransposeKernelBase(const KernelInfo& info, std::optional<std::vector<int64_t>> perm)
      : OpKernel(info), perm_(std::move(perm)) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1, "expects 1 input, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(x->shape.size()));
    Shape out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = x->shape[static_cast<size_t>(perm[i])];
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{x->dtype, out}}};
  }

  // How to walk `y` (the transposed `x`) in order: with the input's strides permuted, the plan
  // says where each output element comes from. Every device gathers along it.
  StatusOr<BroadcastPlan> GatherPlan(const DeviceTensor& x, const DeviceTensor& y) const {
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(x.shape().size()));
    Shape strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) strides[i] = x.strides()[static_cast<size_t>(perm[i])];
    return CollapsePlan(y.shape(), {strides});
  }

  // The permutation for an input of `rank`, checked.
  StatusOr<std::vector<int64_t>> Perm(size_t rank) const {
    std::vector<int64_t> perm(rank);
    if (!perm_) {
      std::iota(perm.rbegin(), perm.rend(), 0);
      return perm;
    }
    ZG_RETURN_IF_NOT(perm_->size() == rank, "perm ", ShapeToString(*perm_), " for rank ", rank);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < rank; ++i) {
      ZG_ASSIGN_OR_RETURN(perm[i], NormalizeAxis((*perm_)[i], static_cast<int64_t>(rank)));
      ZG_RETURN_IF_NOT(!seen[static_cast<size_t>(perm[i])], "perm ", ShapeToString(*perm_),
                       " repeats an axis");
      seen[static_cast<size_t>(perm[i])] = true;
    }
    return perm;
  }

 private:
  std::optional<std::vector<int64_t>> perm_;
};

// Constant: the value is parsed when the kernel is made; each run copies it out.
template <typename Memory>
class ConstantKernel final : public OpKernel {
 public:
  static StatusOr<HostTensorData> ParseAttrs(const KernelInfo& info) {
    const Node& node = *info.node;
    HostTensorData data;
    auto scalar_or_list = [&](DataType dtype, const void* values, size_t count, bool list) {
      data.dtype = dtype;
      if (list) data.shape = {static_cast<int64_t>(count)};
      const auto* bytes = static_cast<const std::byte*>(values);
      data.bytes.assign(bytes, bytes + count * ElementSize(dtype));
    };
    if (const onnx::AttributeProto* value = node.FindAttribute("value")) {
      ZG_RETURN_IF_NOT(value->has_t(), "attribute 'value' holds no tensor");
      ZG_ASSIGN_OR_RETURN(data, ReadTensorProto(value->t()));
    } else if (std::optional<float> f = node.GetFloat("value_float")) {
      scalar_or_list(DataType::kFloat32, &*f, 1, false);
    } else if (std::optional<int64_t> i = node.GetInt("value_int")) {
      scalar_or_list(DataType::kInt64, &*i, 1, false);
    } else if (std::optional<std::span<const float>> fs = node.GetFloats("value_floats")) {
      scalar_or_list(DataType::kFloat32, fs->data(), fs->size(), true);
    } else if (std::optional<std::span<const int64_t>> is = node.GetInts("value_ints")) {
      scalar_or_list(DataType::kInt64, is->data(), is->size(), true);
    } else {
      return UnimplementedError(
          "Constant needs one of value, value_float(s), value_int(s) (strings and sparse "
          "tensors are not supported)");
    }
    return data;
  }
  ConstantKernel(const KernelInfo& info, HostTensorData data)
      : OpKernel(info), data_(std::move(data)) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext&) const override {
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{data_.dtype, data_.shape}}};
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    if (data_.bytes.empty()) return Status::Ok();
    return Memory::CopyFromHost(data_.bytes.data(), ctx.outputs[0]->data(), data_.bytes.size(),
                                ctx);
  }

 private:
  HostTensorData data_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_SHAPE_OPS_H_
