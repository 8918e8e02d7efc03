#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_SHAPE_OPS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_SHAPE_OPS_H_

// Data movement without arithmetic, shared by every device: Identity, Reshape and Nop
// (CopyInputKernel), Transpose (perm, default reversed) and Constant; their shapes are the op
// contracts'. The kernels that only copy are templates on a memory policy
// (HostMemory, CudaMemory: CopyBytes, Zero, CopyFromHost); Transpose's base leaves ComputeImpl to
// the device.

#include <onnx/onnx_pb.h>

#include <optional>
#include <utility>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/runtime/tensor_proto.h"

namespace zerograph::runtime {

// Output 0 holds input 0's bytes: Identity, Reshape (its shape is the contract's) and Nop (whose
// other inputs only order it). A view of the input when the executor can make it one.
template <typename Memory>
class CopyInputKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].view = OutputInfo::View{0, 0};
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    return Memory::CopyBytes(ctx.inputs[0]->data(), ctx.outputs[0]->data(),
                             ctx.outputs[0]->byte_size(), ctx);
  }
};

class TransposeKernelBase : public OpKernel {
 public:
  // The `perm` attribute, when given.
  static StatusOr<std::optional<std::vector<int64_t>>> ParseAttrs(const KernelInfo& info) {
    std::optional<std::vector<int64_t>> perm;
    if (info.node->HasAttribute("perm")) {
      ZG_ASSIGN_OR_RETURN(perm, ContractInts(*info.node, "perm"));
    }
    return perm;
  }
  TransposeKernelBase(const KernelInfo& info, std::optional<std::vector<int64_t>> perm)
      : OpKernel(info), perm_(std::move(perm)) {}

 protected:
  // How to walk `y` (the transposed `x`) in order: with the input's strides permuted, the plan
  // says where each output element comes from. Every device gathers along it.
  StatusOr<BroadcastPlan> GatherPlan(const DeviceTensor& x, const DeviceTensor& y) const {
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(x.shape().size()));
    Shape strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) strides[i] = x.strides()[static_cast<size_t>(perm[i])];
    return CollapsePlan(y.shape(), {strides});
  }

  // The permutation for an input of `rank`, checked.
  StatusOr<std::vector<int64_t>> Perm(size_t rank) const { return TransposePerm(perm_, rank); }

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
