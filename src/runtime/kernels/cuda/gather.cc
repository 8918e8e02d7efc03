// The indexed ops on CUDA (kernels/gather_shapes.h, device code in gather.cu): Gather,
// GatherElements, ScatterElements (every reduction; mul, max, min and add for the 2- to 8-byte
// arithmetic dtypes), Trilu and GatherGrad, plus CastLike.
// An index out of range sets a device flag that the kernel reads back after its launch, so the
// error names the node before the step goes on (a wait on the stream per indexed node).

#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/cuda/gather_launch.h"
#include "runtime/kernels/gather_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

// The device int the indexed kernels set on a bad index.
class BadIndexFlag {
 public:
  BadIndexFlag() = default;
  BadIndexFlag(const BadIndexFlag&) = delete;
  BadIndexFlag& operator=(const BadIndexFlag&) = delete;
  ~BadIndexFlag() {
    if (flag_ != nullptr) cudaFree(flag_);
  }

  // The flag, cleared on `stream`.
  StatusOr<int*> Reset(cudaStream_t stream) {
    if (flag_ == nullptr) {
      ZG_RETURN_IF_ERROR(CudaLaunchStatus(cudaMalloc(reinterpret_cast<void**>(&flag_), sizeof(int)),
                                          "cudaMalloc"));
    }
    ZG_RETURN_IF_ERROR(
        CudaLaunchStatus(cudaMemsetAsync(flag_, 0, sizeof(int), stream), "cudaMemsetAsync"));
    return flag_;
  }
  // Waits for the stream; InvalidArgument when a kernel set the flag.
  Status Check(cudaStream_t stream, int64_t dim) const {
    int bad = 0;
    ZG_RETURN_IF_ERROR(CudaLaunchStatus(
        cudaMemcpyAsync(&bad, flag_, sizeof(int), cudaMemcpyDeviceToHost, stream), "cudaMemcpy"));
    ZG_RETURN_IF_ERROR(CudaLaunchStatus(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
    ZG_RETURN_IF_NOT(bad == 0, "an index is out of range for a dimension of ", dim);
    return Status::Ok();
  }

 private:
  int* flag_ = nullptr;
};

// The walk of `dims` with data strides `data` and index strides `index` (collapsed).
StatusOr<cuda::IndexedWalk> MakeWalk(std::span<const int64_t> dims, Shape data, Shape index,
                                     const DeviceTensor& indices, int64_t axis_dim,
                                     int64_t axis_stride) {
  const BroadcastPlan plan = CollapsePlan(dims, {std::move(data), std::move(index)});
  cuda::IndexedWalk walk;
  ZG_ASSIGN_OR_RETURN(walk.walk, MakeStridedIndexer(plan));
  walk.indices = indices.data();
  walk.indices_int32 = indices.dtype() == DataType::kInt32;
  walk.axis_dim = axis_dim;
  walk.axis_stride = axis_stride;
  return walk;
}

// Gather's and GatherGrad's walk: [outer, n, inner] over data [outer, dim, inner].
StatusOr<cuda::IndexedWalk> RowsWalk(const AxisSplit& at, const DeviceTensor& indices) {
  const int64_t n = indices.numel();
  const Shape dims = {at.outer, n, at.inner};
  return MakeWalk(dims, {at.dim * at.inner, 0, 1}, {0, 1, 0}, indices, at.dim, at.inner);
}

// GatherElements' and ScatterElements' walk: the indices' shape over data of `data_strides`.
StatusOr<cuda::IndexedWalk> ElementsWalk(const DeviceTensor& indices, Shape data_strides,
                                         size_t axis, int64_t axis_dim) {
  const int64_t axis_stride = data_strides[axis];
  data_strides[axis] = 0;
  return MakeWalk(indices.shape(), std::move(data_strides), ContiguousStrides(indices.shape()),
                  indices, axis_dim, axis_stride);
}

class CudaGatherKernel final : public AxisKernelBase {
 public:
  using AxisKernelBase::AxisKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (y.numel() == 0) return Status::Ok();
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(x.rank()));
    const AxisSplit at = SplitAtAxis(x.shape(), axis);
    ZG_ASSIGN_OR_RETURN(cuda::IndexedWalk walk, RowsWalk(at, *ctx.inputs[1]));
    const cudaStream_t stream = NativeStream(ctx);
    ZG_ASSIGN_OR_RETURN(walk.bad_index, flag_.Reset(stream));
    ZG_RETURN_IF_ERROR(CudaLaunchStatus(
        cuda::LaunchIndexedGather(x.element_size(), x.data(), y.data(), y.numel(), walk, stream),
        "gather kernel"));
    return flag_.Check(stream, at.dim);
  }

 private:
  mutable BadIndexFlag flag_;
};

class CudaGatherElementsKernel final : public AxisKernelBase {
 public:
  using AxisKernelBase::AxisKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (y.numel() == 0) return Status::Ok();
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(x.rank()));
    const int64_t dim = x.dim(static_cast<int64_t>(axis));
    ZG_ASSIGN_OR_RETURN(cuda::IndexedWalk walk,
                        ElementsWalk(*ctx.inputs[1], x.strides(), axis, dim));
    const cudaStream_t stream = NativeStream(ctx);
    ZG_ASSIGN_OR_RETURN(walk.bad_index, flag_.Reset(stream));
    ZG_RETURN_IF_ERROR(CudaLaunchStatus(
        cuda::LaunchIndexedGather(x.element_size(), x.data(), y.data(), y.numel(), walk, stream),
        "gather elements kernel"));
    return flag_.Check(stream, dim);
  }

 private:
  mutable BadIndexFlag flag_;
};

cuda::ScatterOp OpOf(ScatterReduction reduction) {
  switch (reduction) {
    case ScatterReduction::kAdd:
      return cuda::ScatterOp::kAdd;
    case ScatterReduction::kMul:
      return cuda::ScatterOp::kMul;
    case ScatterReduction::kMax:
      return cuda::ScatterOp::kMax;
    case ScatterReduction::kMin:
      return cuda::ScatterOp::kMin;
    case ScatterReduction::kNone:
      break;
  }
  return cuda::ScatterOp::kStore;
}

class CudaScatterElementsKernel final : public ScatterElementsKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(const Attrs attrs, ParseAttrs(info));
    using enum DataType;
    const bool combinable =
        DtypeList<kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64>::Contains(info.dtype);
    ZG_RETURN_IF_NOT(
        attrs.reduction == ScatterReduction::kNone || combinable,
        "ScatterElements on CUDA reduces fp32, fp64, fp16, bf16, int32 and int64 only");
    return std::unique_ptr<OpKernel>(new CudaScatterElementsKernel(info, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    const DeviceTensor& updates = *ctx.inputs[2];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_RETURN_IF_ERROR(CudaMemory::CopyBytes(x.data(), y.data(), y.byte_size(), ctx));
    if (updates.numel() == 0) return Status::Ok();
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(x.rank()));
    const int64_t dim = x.dim(static_cast<int64_t>(axis));
    ZG_ASSIGN_OR_RETURN(cuda::IndexedWalk walk,
                        ElementsWalk(*ctx.inputs[1], x.strides(), axis, dim));
    const cudaStream_t stream = NativeStream(ctx);
    ZG_ASSIGN_OR_RETURN(walk.bad_index, flag_.Reset(stream));
    ZG_RETURN_IF_ERROR(
        CudaLaunchStatus(cuda::LaunchIndexedScatter(x.dtype(), OpOf(reduction_), updates.data(),
                                                    y.data(), updates.numel(), walk, stream),
                         "scatter elements kernel"));
    return flag_.Check(stream, dim);
  }

 private:
  using ScatterElementsKernelBase::ScatterElementsKernelBase;
  mutable BadIndexFlag flag_;
};

// GatherGrad: zeros, then dY's rows added atomically where Gather took them from.
class CudaGatherGradKernel final : public AxisKernelBase {
 public:
  using AxisKernelBase::AxisKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& dy = *ctx.inputs[2];
    DeviceTensor& dx = *ctx.outputs[0];
    ZG_RETURN_IF_ERROR(CudaMemory::Zero(dx.data(), dx.byte_size(), ctx));
    if (dy.numel() == 0) return Status::Ok();
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(dx.rank()));
    const AxisSplit at = SplitAtAxis(dx.shape(), axis);
    ZG_ASSIGN_OR_RETURN(cuda::IndexedWalk walk, RowsWalk(at, *ctx.inputs[1]));
    const cudaStream_t stream = NativeStream(ctx);
    ZG_ASSIGN_OR_RETURN(walk.bad_index, flag_.Reset(stream));
    ZG_RETURN_IF_ERROR(
        CudaLaunchStatus(cuda::LaunchIndexedScatter(dy.dtype(), cuda::ScatterOp::kAdd, dy.data(),
                                                    dx.data(), dy.numel(), walk, stream),
                         "gather grad kernel"));
    return flag_.Check(stream, at.dim);
  }

 private:
  mutable BadIndexFlag flag_;
};

class CudaTriluKernel final : public TriluKernelBase {
 public:
  using TriluKernelBase::TriluKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const int64_t k, K(ctx));
    const int64_t rows = x.dim(x.rank() - 2);
    const int64_t cols = x.dim(x.rank() - 1);
    const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    return CudaLaunchStatus(cuda::LaunchTrilu(x.element_size(), x.data(), y.data(), matrices, rows,
                                              cols, k, upper_, NativeStream(ctx)),
                            "trilu kernel");
  }
};

// CastLike: Cast to the dtype of input 1.
class CudaCastLikeKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    if (ctx.input(0)->dtype == ctx.input(1)->dtype) outputs[0].view = OutputInfo::View{0, 0};
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (x.dtype() == y.dtype())
      return CudaMemory::CopyBytes(x.data(), y.data(), y.byte_size(), ctx);
    ZG_RETURN_IF_NOT(CastDtypes::Contains(y.dtype()), "CastLike to ", DataTypeName(y.dtype()),
                     " is not supported");
    return CudaLaunchStatus(
        cuda::LaunchCast(x.dtype(), y.dtype(), x.data(), y.data(), y.numel(), NativeStream(ctx)),
        "cast kernel");
  }
};

}  // namespace

Status RegisterCudaGatherKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  const std::vector<DataType> all = AllDtypes::Vector();
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Gather", kCuda, all, 0, {}, MakeKernelWithAttrs<CudaGatherKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "GatherElements", kCuda, all, 0, {}, MakeKernelWithAttrs<CudaGatherElementsKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "ScatterElements", kCuda, all, 0, {}, &CudaScatterElementsKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Scatter", kCuda, AllButBFloat16(), 0, {}, &CudaScatterElementsKernel::Create}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Trilu", kCuda, all, 0, {}, MakeKernelWithAttrs<CudaTriluKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "CastLike", kCuda, CastDtypes::Vector(), 0, {}, MakeKernel<CudaCastLikeKernel>}));
  return registry.Register({"com.microsoft",
                            "GatherGrad",
                            kCuda,
                            FloatDtypes::Vector(),
                            2,
                            {},
                            MakeKernelWithAttrs<CudaGatherGradKernel>});
}

}  // namespace zerograph::runtime
