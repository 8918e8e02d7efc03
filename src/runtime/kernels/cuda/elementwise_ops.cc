// The element-wise ops on CUDA: the tables of elementwise_ops.h (binary ops broadcasting as on the
// CPU) and Cast. Shapes come from the op contracts; the kernels are in elementwise.cu.

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cast_shapes.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/dtype_list.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using elementwise::OpList;

// `op_` is the op's index in elementwise::BinaryOps.
class CudaBinaryKernel final : public BinaryKernelBase {
 public:
  CudaBinaryKernel(const KernelInfo& info, size_t op) : BinaryKernelBase(info), op_(op) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& out = *ctx.outputs[0];
    if (a.shape() == b.shape()) {
      return CudaLaunchStatus(cuda::LaunchBinary(op_, dtype(), a.data(), b.data(), out.data(),
                                                 out.numel(), nullptr, NativeStream(ctx)),
                              "binary kernel");
    }
    const std::array<std::span<const int64_t>, 2> inputs = {a.shape(), b.shape()};
    ZG_ASSIGN_OR_RETURN(const cuda::StridedIndexer index,
                        MakeStridedIndexer(PlanBroadcast(out.shape(), inputs)));
    return CudaLaunchStatus(cuda::LaunchBinary(op_, dtype(), a.data(), b.data(), out.data(),
                                               out.numel(), &index, NativeStream(ctx)),
                            "broadcast binary kernel");
  }

 private:
  size_t op_;
};

// `op_` is the op's index in elementwise::UnaryOps.
class CudaUnaryKernel final : public UnaryKernelBase {
 public:
  CudaUnaryKernel(const KernelInfo& info, size_t op) : UnaryKernelBase(info), op_(op) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    return CudaLaunchStatus(
        cuda::LaunchUnary(op_, dtype(), ctx.inputs[0]->data(), ctx.outputs[0]->data(),
                          ctx.outputs[0]->numel(), NativeStream(ctx)),
        "unary kernel");
  }

 private:
  size_t op_;
};

// Registers Op for its dtypes as a Kernel made with the op's index in List (the launchers' key).
template <typename Kernel, typename Op, typename List, DataType... Ds>
Status RegisterOp(KernelRegistry& registry, DtypeList<Ds...>) {
  return registry.Register({std::string(Op::kDomain),
                            std::string(Op::kName),
                            DeviceType::kCuda,
                            {Ds...},
                            0,
                            {},
                            [](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
                              return std::unique_ptr<OpKernel>(
                                  new Kernel(info, elementwise::IndexOf<Op>(List{})));
                            }});
}

template <typename Kernel, typename... Ops>
Status RegisterOps(KernelRegistry& registry, OpList<Ops...>) {
  Status status;
  ((status = status.ok() ? RegisterOp<Kernel, Ops, OpList<Ops...>>(registry, typename Ops::Types{})
                         : status),
   ...);
  return status;
}

class CudaCastKernel final : public CastKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(const DataType target, ParseTarget(info));
    if (!CastDtypes::Contains(info.dtype) || !CastDtypes::Contains(target)) {
      return UnimplementedError(StrCat("Cast from ", DataTypeName(info.dtype), " to ",
                                       DataTypeName(target), " is not supported"));
    }
    return std::unique_ptr<OpKernel>(new CudaCastKernel(info, target));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    if (target_ == x.dtype()) return CudaMemory::CopyBytes(x.data(), y.data(), y.byte_size(), ctx);
    return CudaLaunchStatus(
        cuda::LaunchCast(x.dtype(), target_, x.data(), y.data(), y.numel(), NativeStream(ctx)),
        "cast kernel");
  }

 private:
  CudaCastKernel(const KernelInfo& info, DataType target) : CastKernelBase(info, target) {}
};

}  // namespace

Status RegisterCudaElementwiseKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(RegisterOps<CudaUnaryKernel>(registry, elementwise::UnaryOps{}));
  ZG_RETURN_IF_ERROR(RegisterOps<CudaBinaryKernel>(registry, elementwise::BinaryOps{}));
  return registry.Register(
      {"", "Cast", DeviceType::kCuda, CastDtypes::Vector(), 0, {}, &CudaCastKernel::Create});
}

}  // namespace zerograph::runtime
