// The element-wise ops outside the tables on CUDA, registered for the dtypes of their CPU twins
// (kernels/cpu/elementwise_attr_ops.cc, elementwise_nary.cc, microsoft_elementwise_grads.cc):
// LeakyRelu, Gelu, Clip, Pow, Mod, Max, Min, Sum, Mean, Where, and ONNX Runtime's
// BiasGeluGrad_dX, DivGrad and Scale. The kernels are in elementwise_attr.cu.

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_attr_launch.h"
#include "runtime/kernels/dtype_list.h"
#include "runtime/kernels/elementwise_attr_ops.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/microsoft_grad_shapes.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

namespace ew = elementwise;
using cuda::MapOp;

// A StridedIndexer broadcasting `inputs` to `out`, or nullopt when every input has its shape.
StatusOr<std::optional<cuda::StridedIndexer>> BroadcastIndexer(
    std::span<const int64_t> out, std::span<const std::span<const int64_t>> inputs) {
  bool same = true;
  for (std::span<const int64_t> in : inputs) {
    same &= std::equal(in.begin(), in.end(), out.begin(), out.end());
  }
  if (same) return std::optional<cuda::StridedIndexer>();
  ZG_ASSIGN_OR_RETURN(cuda::StridedIndexer index, MakeStridedIndexer(PlanBroadcast(out, inputs)));
  return std::optional<cuda::StridedIndexer>(index);
}

const cuda::StridedIndexer* OrNull(const std::optional<cuda::StridedIndexer>& index) {
  return index ? &*index : nullptr;
}

// y = f(x) with parameters fixed when the kernel is made (LeakyRelu, Gelu, Clip-6).
class CudaMapKernel final : public UnaryKernelBase {
 public:
  CudaMapKernel(const KernelInfo& info, MapOp op, double p0 = 0, double p1 = 0)
      : UnaryKernelBase(info), op_(op), p0_(p0), p1_(p1) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    return CudaLaunchStatus(
        cuda::LaunchMap(op_, dtype(), p0_, p1_, ctx.inputs[0]->data(), ctx.outputs[0]->data(),
                        ctx.outputs[0]->numel(), NativeStream(ctx)),
        "map kernel");
  }

 private:
  MapOp op_;
  double p0_;
  double p1_;
};

StatusOr<std::unique_ptr<OpKernel>> CreateLeakyRelu(const KernelInfo& info) {
  ZG_ASSIGN_OR_RETURN(float alpha, ContractFloat(*info.node, "alpha"));
  return std::unique_ptr<OpKernel>(new CudaMapKernel(info, MapOp::kLeakyRelu, alpha));
}

StatusOr<std::unique_ptr<OpKernel>> CreateGelu(const KernelInfo& info) {
  const StatusOr<std::string> approximate = ContractString(*info.node, "approximate");
  if (!approximate.ok()) return approximate.status();
  return std::unique_ptr<OpKernel>(
      new CudaMapKernel(info, *approximate == "tanh" ? MapOp::kGeluTanh : MapOp::kGeluExact));
}

// Clip-11: bounds from the optional inputs 1 and 2, which the executor keeps on the host.
class CudaClipKernel final : public UnaryKernelBase {
 public:
  using UnaryKernelBase::UnaryKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const void* bounds[2] = {nullptr, nullptr};
    for (size_t i : {size_t{1}, size_t{2}}) {
      const DeviceTensor* bound = i < ctx.inputs.size() ? ctx.inputs[i] : nullptr;
      if (bound == nullptr) continue;
      ZG_RETURN_IF_NOT(bound->numel() == 1, i == 1 ? "min" : "max", " ",
                       ShapeToString(bound->shape()), " is not a single value");
      bounds[i - 1] = bound->data();
    }
    return CudaLaunchStatus(
        cuda::LaunchClip(dtype(), bounds[0], bounds[1], ctx.inputs[0]->data(),
                         ctx.outputs[0]->data(), ctx.outputs[0]->numel(), NativeStream(ctx)),
        "clip kernel");
  }
};

StatusOr<std::unique_ptr<OpKernel>> CreateClip(const KernelInfo& info) {
  if (info.contract->since_version >= 11) return MakeKernel<CudaClipKernel>(info);
  if (!FloatDtypes::Contains(info.dtype)) {
    return InvalidArgumentError(StrCat("Clip-6 does not take ", DataTypeName(info.dtype)));
  }
  ZG_ASSIGN_OR_RETURN(float lo, ContractFloat(*info.node, "min"));
  ZG_ASSIGN_OR_RETURN(float hi, ContractFloat(*info.node, "max"));
  return std::unique_ptr<OpKernel>(new CudaMapKernel(info, MapOp::kClip, lo, hi));
}

// Pow and Mod: two inputs broadcast.
class CudaPowModKernel final : public BinaryKernelBase {
 public:
  // `fmod` is Mod's attribute; nullopt for Pow.
  CudaPowModKernel(const KernelInfo& info, std::optional<bool> fmod)
      : BinaryKernelBase(info), fmod_(fmod) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& out = *ctx.outputs[0];
    const std::array<std::span<const int64_t>, 2> inputs = {a.shape(), b.shape()};
    ZG_ASSIGN_OR_RETURN(const std::optional<cuda::StridedIndexer> index,
                        BroadcastIndexer(out.shape(), inputs));
    if (!fmod_) {
      return CudaLaunchStatus(cuda::LaunchPow(dtype(), b.dtype(), a.data(), b.data(), out.data(),
                                              out.numel(), OrNull(index), NativeStream(ctx)),
                              "pow kernel");
    }
    return CudaLaunchStatus(cuda::LaunchMod(dtype(), *fmod_, a.data(), b.data(), out.data(),
                                            out.numel(), OrNull(index), NativeStream(ctx)),
                            "mod kernel");
  }

 private:
  std::optional<bool> fmod_;
};

StatusOr<std::unique_ptr<OpKernel>> CreatePow(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(new CudaPowModKernel(info, std::nullopt));
}

StatusOr<std::unique_ptr<OpKernel>> CreateMod(const KernelInfo& info) {
  ZG_ASSIGN_OR_RETURN(int64_t fmod, ContractInt(*info.node, "fmod"));
  if (fmod == 0 && FloatDtypes::Contains(info.dtype)) {
    return InvalidArgumentError(StrCat("Mod of ", DataTypeName(info.dtype),
                                       " needs fmod=1 (ONNX defines fmod=0 for integers only)"));
  }
  return std::unique_ptr<OpKernel>(new CudaPowModKernel(info, fmod != 0));
}

// Max, Min, Sum, Mean: inputs folded pairwise into the output, as on the CPU.
class CudaVariadicKernel final : public VariadicKernelBase {
 public:
  CudaVariadicKernel(const KernelInfo& info, size_t step, bool mean)
      : VariadicKernelBase(info), step_(step), mean_(mean) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    DeviceTensor& out = *ctx.outputs[0];
    const DeviceTensor& first = *ctx.inputs[0];
    if (ctx.inputs.size() == 1) {
      ZG_RETURN_IF_ERROR(CudaMemory::CopyBytes(first.data(), out.data(), out.byte_size(), ctx));
    } else {
      ZG_RETURN_IF_ERROR(Step(first.data(), first.shape(), *ctx.inputs[1], out, ctx));
    }
    for (size_t i = 2; i < ctx.inputs.size(); ++i) {
      ZG_RETURN_IF_ERROR(Step(out.data(), out.shape(), *ctx.inputs[i], out, ctx));
    }
    if (!mean_) return Status::Ok();
    return CudaLaunchStatus(
        cuda::LaunchMap(MapOp::kScale, dtype(), 1.0 / static_cast<double>(ctx.inputs.size()), 0,
                        out.data(), out.data(), out.numel(), NativeStream(ctx)),
        "mean scaling kernel");
  }

 private:
  Status Step(const void* a, std::span<const int64_t> a_shape, const DeviceTensor& b,
              DeviceTensor& out, const KernelContext& ctx) const {
    const std::array<std::span<const int64_t>, 2> inputs = {a_shape, b.shape()};
    ZG_ASSIGN_OR_RETURN(const std::optional<cuda::StridedIndexer> index,
                        BroadcastIndexer(out.shape(), inputs));
    return CudaLaunchStatus(cuda::LaunchVariadicStep(step_, dtype(), a, b.data(), out.data(),
                                                     out.numel(), OrNull(index), NativeStream(ctx)),
                            "variadic step kernel");
  }

  size_t step_;
  bool mean_;
};

template <typename Step, bool kMean>
StatusOr<std::unique_ptr<OpKernel>> CreateVariadic(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(
      new CudaVariadicKernel(info, ew::IndexOf<Step>(ew::VariadicSteps{}), kMean));
}

class CudaWhereKernel final : public WhereKernelBase {
 public:
  using WhereKernelBase::WhereKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& condition = *ctx.inputs[0];
    const DeviceTensor& x = *ctx.inputs[1];
    const DeviceTensor& y = *ctx.inputs[2];
    DeviceTensor& out = *ctx.outputs[0];
    const std::array<std::span<const int64_t>, 3> inputs = {condition.shape(), x.shape(),
                                                            y.shape()};
    ZG_ASSIGN_OR_RETURN(const std::optional<cuda::StridedIndexer> index,
                        BroadcastIndexer(out.shape(), inputs));
    return CudaLaunchStatus(
        cuda::LaunchWhere(ElementSize(dtype()), condition.data_as<const bool>(), x.data(), y.data(),
                          out.data(), out.numel(), OrNull(index), NativeStream(ctx)),
        "where kernel");
  }
};

class CudaBiasGeluGradKernel final : public BiasGeluGradKernelBase {
 public:
  using BiasGeluGradKernelBase::BiasGeluGradKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    return CudaLaunchStatus(cuda::LaunchBiasGeluGrad(
                                dtype(), ctx.inputs[0]->data(), ctx.inputs[1]->data(),
                                ctx.inputs[2]->data(), ctx.outputs[0]->data(),
                                ctx.outputs[0]->numel(), ctx.inputs[2]->numel(), NativeStream(ctx)),
                            "BiasGeluGrad_dX kernel");
  }
};

// DivGrad: each present gradient sums dY's terms over the axes its input was broadcast along.
class CudaDivGradKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& dy = *ctx.inputs[0];
    const DeviceTensor& a = *ctx.inputs[1];
    const DeviceTensor& b = *ctx.inputs[2];
    if (DeviceTensor* da = ctx.outputs[0]) ZG_RETURN_IF_ERROR(Gradient(true, dy, a, b, *da, ctx));
    if (DeviceTensor* db = ctx.outputs.size() > 1 ? ctx.outputs[1] : nullptr) {
      ZG_RETURN_IF_ERROR(Gradient(false, dy, b, a, *db, ctx));
    }
    return Status::Ok();
  }

 private:
  // The gradient of `self` (A when of_a, else B), `other` the remaining input: dY's dimensions
  // split into those `self` keeps (its elements, in order) and those it was broadcast along.
  Status Gradient(bool of_a, const DeviceTensor& dy, const DeviceTensor& self,
                  const DeviceTensor& other, DeviceTensor& grad, const KernelContext& ctx) const {
    const Shape& out = dy.shape();
    const size_t rank = out.size();
    const Shape dy_strides = ContiguousStrides(out);
    Shape self_dims(rank, 1), other_strides(rank, 0);
    const Shape own_other = ContiguousStrides(other.shape());
    for (size_t i = 0; i < self.shape().size(); ++i) {
      self_dims[rank - self.shape().size() + i] = self.shape()[i];
    }
    for (size_t i = 0; i < other.shape().size(); ++i) {
      const size_t d = rank - other.shape().size() + i;
      other_strides[d] = other.shape()[i] == 1 ? 0 : own_other[i];
    }
    Shape kept_dims, reduced_dims;
    std::vector<Shape> kept_strides(2), reduced_strides(2);
    for (size_t d = 0; d < rank; ++d) {
      const bool reduced = self_dims[d] == 1 && out[d] != 1;
      (reduced ? reduced_dims : kept_dims).push_back(out[d]);
      std::vector<Shape>& strides = reduced ? reduced_strides : kept_strides;
      strides[0].push_back(dy_strides[d]);
      strides[1].push_back(other_strides[d]);
    }
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer kept,
                        MakeStridedIndexer(kept_dims, kept_strides));
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer reduced,
                        MakeStridedIndexer(reduced_dims, reduced_strides));
    return CudaLaunchStatus(cuda::LaunchDivGrad(dtype(), of_a, dy.data(), other.data(), self.data(),
                                                grad.data(), grad.numel(), kept, reduced,
                                                NumElements(reduced_dims), NativeStream(ctx)),
                            "DivGrad kernel");
  }
};

class CudaScaleKernel final : public ScaleKernelBase {
 public:
  using ScaleKernelBase::ScaleKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const double factor, Factor(*ctx.inputs[1]));
    return CudaLaunchStatus(
        cuda::LaunchMap(MapOp::kScale, dtype(), factor, 0, ctx.inputs[0]->data(),
                        ctx.outputs[0]->data(), ctx.outputs[0]->numel(), NativeStream(ctx)),
        "scale kernel");
  }
};

template <typename List>
Status Register(KernelRegistry& registry, std::string_view domain, std::string op, List,
                KernelFactory factory, int type_input = 0, std::vector<int> host_inputs = {}) {
  return registry.Register({std::string(domain), std::move(op), DeviceType::kCuda, List::Vector(),
                            type_input, std::move(host_inputs), std::move(factory)});
}

}  // namespace

Status RegisterCudaElementwiseAttrKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(Register(registry, "", "LeakyRelu", FloatDtypes{}, &CreateLeakyRelu));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Gelu", FloatDtypes{}, &CreateGelu));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Clip", AllNumericDtypes{}, &CreateClip, 0, {1, 2}));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Pow", NumericDtypes{}, &CreatePow));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Mod", AllNumericDtypes{}, &CreateMod));
  ZG_RETURN_IF_ERROR(
      Register(registry, "", "Max", AllNumericDtypes{}, &CreateVariadic<ew::MaxOf, false>));
  ZG_RETURN_IF_ERROR(
      Register(registry, "", "Min", AllNumericDtypes{}, &CreateVariadic<ew::MinOf, false>));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Sum", FloatDtypes{}, &CreateVariadic<ew::Add, false>));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Mean", FloatDtypes{}, &CreateVariadic<ew::Add, true>));
  ZG_RETURN_IF_ERROR(Register(registry, "", "Where", AllDtypes{}, &MakeKernel<CudaWhereKernel>, 1));
  ZG_RETURN_IF_ERROR(Register(registry, kMicrosoftDomain, "BiasGeluGrad_dX", FloatDtypes{},
                              &MakeKernel<CudaBiasGeluGradKernel>));
  ZG_RETURN_IF_ERROR(Register(registry, kMicrosoftDomain, "DivGrad", FloatDtypes{},
                              &MakeKernel<CudaDivGradKernel>));
  return Register(registry, kMicrosoftDomain, "Scale", FloatDtypes{},
                  &MakeKernelWithAttrs<CudaScaleKernel>, 0, {1});
}

}  // namespace zerograph::runtime
