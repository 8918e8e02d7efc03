// The classification losses and their gradients on CUDA (loss.cu), attributes from the shared
// base, for the CPU's dtypes. A reduced loss sums through a small device workspace the kernel
// allocates on its first run and keeps: a node runs on one stream, one step after another.

#include <memory>
#include <mutex>

#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/loss_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/loss_shapes.h"
#include "zerograph/runtime/buffer.h"

namespace zerograph::runtime {
namespace {

// The device input i, or null when the node omits it.
const void* OptionalData(const KernelContext& ctx, size_t i) {
  return i < ctx.inputs.size() && ctx.inputs[i] != nullptr ? ctx.inputs[i]->data() : nullptr;
}

class CudaLossKernelBase : public LossKernelBase {
 public:
  using LossKernelBase::LossKernelBase;

 protected:
  // The problem of this run: dims from `scores`, labels from input `label_input`, weights from
  // input `label_input + 1`.
  StatusOr<cuda::LossProblem> ProblemOf(const KernelContext& ctx, const DeviceTensor& scores,
                                        size_t label_input) const {
    ZG_ASSIGN_OR_RETURN(std::optional<int64_t> ignore, IgnoreIndex(ctx));
    std::call_once(workspace_once_, [&] {
      workspace_ = ctx.stream->device().Allocate(static_cast<size_t>(cuda::kLossWorkspaceDoubles) *
                                                 sizeof(double));
    });
    ZG_RETURN_IF_ERROR(workspace_.status());
    const LossDims dims = LossDimsOf(scores.shape());
    cuda::LossProblem p;
    p.dtype = scores.dtype();
    p.out_dtype = ctx.outputs[0]->dtype();
    p.label_dtype = ctx.inputs[label_input]->dtype();
    p.n = dims.n;
    p.c = dims.c;
    p.d = dims.d;
    p.reduction = attrs_.reduction;
    p.has_ignore = ignore.has_value();
    p.ignore = ignore.value_or(0);
    p.labels = ctx.inputs[label_input]->data();
    p.weights = OptionalData(ctx, label_input + 1);
    p.workspace = static_cast<double*>((*workspace_)->data());
    return p;
  }

 private:
  mutable std::once_flag workspace_once_;
  mutable StatusOr<std::shared_ptr<Buffer>> workspace_ = std::shared_ptr<Buffer>();
};

class CudaLossKernel final : public CudaLossKernelBase {
 public:
  CudaLossKernel(const KernelInfo& info, LossAttrs attrs)
      : CudaLossKernelBase(info, attrs),
        softmax_(info.node->op_type() != "NegativeLogLikelihoodLoss") {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& scores = *ctx.inputs[0];
    ZG_ASSIGN_OR_RETURN(const cuda::LossProblem p, ProblemOf(ctx, scores, 1));
    void* log_prob =
        ctx.outputs.size() > 1 && ctx.outputs[1] != nullptr ? ctx.outputs[1]->data() : nullptr;
    return CudaLaunchStatus(cuda::LaunchLoss(p, softmax_, scores.data(), ctx.outputs[0]->data(),
                                             log_prob, NativeStream(ctx)),
                            "loss kernel");
  }

 private:
  const bool softmax_;
};

class CudaLossGradKernel final : public CudaLossKernelBase {
 public:
  using CudaLossKernelBase::CudaLossKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& dy = *ctx.inputs[0];
    const DeviceTensor& log_prob = *ctx.inputs[1];
    ZG_ASSIGN_OR_RETURN(const cuda::LossProblem p, ProblemOf(ctx, log_prob, 2));
    const bool per_sample = p.reduction == LossReduction::kNone;
    ZG_RETURN_IF_NOT(per_sample ? dy.numel() == p.n * p.d : dy.numel() == 1, "dY ", dy.ToString(),
                     " does not fit reduction ", per_sample ? "none" : "sum or mean");
    return CudaLaunchStatus(
        cuda::LaunchLossGrad(p, dy.data(), log_prob.data(), OptionalData(ctx, 5),
                             ctx.outputs[0]->data(), NativeStream(ctx)),
        "loss gradient kernel");
  }
};

}  // namespace

Status RegisterCudaLossKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  const auto forward = MakeKernelWithAttrs<CudaLossKernel>;
  const auto grad = MakeKernelWithAttrs<CudaLossGradKernel>;
  // The Internal ops read ignore_index on the host (their contracts say so).
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "SoftmaxCrossEntropyLoss", kCuda, FloatDtypes::Vector(), 0, {}, forward}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "NegativeLogLikelihoodLoss", kCuda, IeeeFloatDtypes::Vector(), 0, {}, forward}));
  ZG_RETURN_IF_ERROR(registry.Register({"com.microsoft",
                                        "SoftmaxCrossEntropyLossInternal",
                                        kCuda,
                                        FloatDtypes::Vector(),
                                        0,
                                        {},
                                        forward}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"com.microsoft", "SoftmaxCrossEntropyLossGrad", kCuda, FloatDtypes::Vector(), 0, {}, grad}));
  return registry.Register({"com.microsoft",
                            "SoftmaxCrossEntropyLossInternalGrad",
                            kCuda,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            grad});
}

}  // namespace zerograph::runtime
