// The element-wise ops on CUDA: Add Sub Mul Div Greater ReluGrad (broadcasting as on the CPU),
// Relu Neg Sqrt, Cast. Shapes come from the shared bases; the kernels are in elementwise.cu.

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string>

#include "runtime/kernels/cast_shapes.h"
#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/elementwise_launch.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using cuda::BinaryOp;
using cuda::UnaryOp;

class CudaBinaryKernel final : public BinaryKernelBase {
 public:
  CudaBinaryKernel(const KernelInfo& info, BinaryOp op)
      : BinaryKernelBase(info, op == BinaryOp::kGreater, op == BinaryOp::kReluGrad), op_(op) {}

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
  BinaryOp op_;
};

template <BinaryOp kOp>
StatusOr<std::unique_ptr<OpKernel>> MakeBinary(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(new CudaBinaryKernel(info, kOp));
}

class CudaUnaryKernel final : public UnaryKernelBase {
 public:
  CudaUnaryKernel(const KernelInfo& info, UnaryOp op) : UnaryKernelBase(info), op_(op) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    return CudaLaunchStatus(
        cuda::LaunchUnary(op_, dtype(), ctx.inputs[0]->data(), ctx.outputs[0]->data(),
                          ctx.outputs[0]->numel(), NativeStream(ctx)),
        "unary kernel");
  }

 private:
  UnaryOp op_;
};

template <UnaryOp kOp>
StatusOr<std::unique_ptr<OpKernel>> MakeUnary(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(new CudaUnaryKernel(info, kOp));
}

// The CPU's Cast dtypes (kernels/cpu/cast.cc), as sources and as targets.
constexpr DataType kCastDtypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                    DataType::kBFloat16, DataType::kInt64,   DataType::kInt32,
                                    DataType::kInt8,     DataType::kUint8,   DataType::kBool};

bool IsCastDtype(DataType dtype) {
  return std::find(std::begin(kCastDtypes), std::end(kCastDtypes), dtype) != std::end(kCastDtypes);
}

class CudaCastKernel final : public CastKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(const DataType target, ParseTarget(info));
    if (!IsCastDtype(info.dtype) || !IsCastDtype(target)) {
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
  using enum DataType;
  constexpr auto kCuda = DeviceType::kCuda;
  const std::vector<DataType> numeric = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64};
  const std::vector<DataType> floats = {kFloat32, kFloat64, kFloat16, kBFloat16};
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Add", kCuda, numeric, 0, {}, MakeBinary<BinaryOp::kAdd>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Sub", kCuda, numeric, 0, {}, MakeBinary<BinaryOp::kSub>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Mul", kCuda, numeric, 0, {}, MakeBinary<BinaryOp::kMul>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Div", kCuda, floats, 0, {}, MakeBinary<BinaryOp::kDiv>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Greater", kCuda, numeric, 0, {}, MakeBinary<BinaryOp::kGreater>}));
  ZG_RETURN_IF_ERROR(registry.Register({std::string(kZerographDomain),
                                        "ReluGrad",
                                        kCuda,
                                        {kFloat32, kFloat16, kBFloat16},
                                        0,
                                        {},
                                        MakeBinary<BinaryOp::kReluGrad>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Relu", kCuda, floats, 0, {}, MakeUnary<UnaryOp::kRelu>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Neg", kCuda, numeric, 0, {}, MakeUnary<UnaryOp::kNeg>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Sqrt", kCuda, floats, 0, {}, MakeUnary<UnaryOp::kSqrt>}));
  const std::vector<DataType> cast(std::begin(kCastDtypes), std::end(kCastDtypes));
  return registry.Register({"", "Cast", kCuda, cast, 0, {}, &CudaCastKernel::Create});
}

}  // namespace zerograph::runtime
