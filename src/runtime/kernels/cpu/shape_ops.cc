// Data movement without arithmetic: Identity, Reshape (0 copies a dimension unless allowzero, -1
// is inferred; the shape input is read on the host at planning time), Transpose (perm, default
// reversed) and Constant. Identity and Reshape outputs may be views of their input.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/runtime/tensor_proto.h"

namespace zerograph::runtime {
namespace {

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
    CopyUnlessSame(*ctx.inputs[0], *ctx.outputs[0]);
    return Status::Ok();
  }
};

// The output shape of Reshape(input, requested) per ONNX opset 14.
StatusOr<Shape> ReshapedShape(const Shape& input, const std::vector<int64_t>& requested,
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

class ReshapeKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t allowzero, IntAttr(*info.node, "allowzero", 0));
    return std::unique_ptr<OpKernel>(new ReshapeKernel(info, allowzero != 0));
  }

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
    CopyUnlessSame(*ctx.inputs[0], *ctx.outputs[0]);
    return Status::Ok();
  }

 private:
  ReshapeKernel(const KernelInfo& info, bool allowzero) : OpKernel(info), allowzero_(allowzero) {}
  bool allowzero_;
};

// out[i] = in[i·stride] for a run of n elements of `Word` (a type of the element's size).
template <typename Word>
void GatherRun(const std::byte* in, int64_t stride, std::byte* out, int64_t n) {
  const Word* src = reinterpret_cast<const Word*>(in);
  Word* dst = reinterpret_cast<Word*>(out);
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

class TransposeKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::optional<std::vector<int64_t>> perm;
    if (info.node->HasAttribute("perm")) {
      ZG_ASSIGN_OR_RETURN(perm, IntsAttr(*info.node, "perm"));
    }
    return std::unique_ptr<OpKernel>(new TransposeKernel(info, std::move(perm)));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1, "expects 1 input, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(x->shape.size()));
    Shape out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = x->shape[static_cast<size_t>(perm[i])];
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{x->dtype, out}}};
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(x.shape().size()));
    // Walk the output in order; the input's strides, permuted, say where each element comes from.
    Shape strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) strides[i] = x.strides()[static_cast<size_t>(perm[i])];
    const BroadcastPlan plan = CollapsePlan(y.shape(), {strides});
    const int64_t inner_stride = plan.strides[0].back();
    const size_t size = x.element_size();
    const auto* in = static_cast<const std::byte*>(x.data());
    auto* out = static_cast<std::byte*>(y.data());
    int64_t out_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      const std::byte* src = in + offsets[0] * static_cast<int64_t>(size);
      std::byte* dst = out + out_offset * static_cast<int64_t>(size);
      switch (size) {
        case 1:
          GatherRun<uint8_t>(src, inner_stride, dst, n);
          break;
        case 2:
          GatherRun<uint16_t>(src, inner_stride, dst, n);
          break;
        case 4:
          GatherRun<uint32_t>(src, inner_stride, dst, n);
          break;
        default:
          GatherRun<uint64_t>(src, inner_stride, dst, n);
          break;
      }
      out_offset += n;
    });
    return Status::Ok();
  }

 private:
  TransposeKernel(const KernelInfo& info, std::optional<std::vector<int64_t>> perm)
      : OpKernel(info), perm_(std::move(perm)) {}

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

  std::optional<std::vector<int64_t>> perm_;
};

// Constant: the value is parsed when the kernel is made; each run copies it out.
class ConstantKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
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
    return std::unique_ptr<OpKernel>(new ConstantKernel(info, std::move(data)));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext&) const override {
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{data_.dtype, data_.shape}}};
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    if (!data_.bytes.empty())
      std::memcpy(ctx.outputs[0]->data(), data_.bytes.data(), data_.bytes.size());
    return Status::Ok();
  }

 private:
  ConstantKernel(const KernelInfo& info, HostTensorData data)
      : OpKernel(info), data_(std::move(data)) {}
  HostTensorData data_;
};

}  // namespace

Status RegisterCpuShapeKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::vector<DataType> all(std::begin(kAllDtypes), std::end(kAllDtypes));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Identity", kCpu, all, 0, {}, MakeKernel<IdentityKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register({"", "Reshape", kCpu, all, 0, {1}, &ReshapeKernel::Create}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Transpose", kCpu, all, 0, {}, &TransposeKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Constant", kCpu, {DataType::kUndefined}, -1, {}, &ConstantKernel::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
