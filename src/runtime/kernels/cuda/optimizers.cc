// The optimizers on CUDA: org.zerograph AdamW and SGD, ONNX Adam, Momentum and Adagrad, one
// fused launch over all tensors of a node (optimizers.cu). Attributes and shapes come from the
// shared bases; the step's scalars (lr / R and step / T) are host inputs, read here to compute
// the coefficients as the CPU kernels do, in double, before the launch.

#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/adamw_coefficients.h"
#include "runtime/kernels/cuda/cuda_kernel_util.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/optimizer_launch.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/onnx_optimizer_shapes.h"
#include "runtime/kernels/optimizer_shapes.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using cuda::UpdateTensors;

// The table of a multi-tensor update: n tensors, `inputs` input groups starting at input
// `first`, `outputs` output groups.
std::vector<UpdateTensors> UpdateTable(const KernelContext& ctx, size_t n, size_t first,
                                       size_t inputs, size_t outputs) {
  std::vector<UpdateTensors> table(n);
  for (size_t i = 0; i < n; ++i) {
    table[i].numel = ctx.outputs[i]->numel();
    for (size_t k = 0; k < inputs; ++k) table[i].in[k] = ctx.inputs[first + k * n + i]->data();
    for (size_t k = 0; k < outputs; ++k) table[i].out[k] = ctx.outputs[k * n + i]->data();
  }
  return table;
}

// The control input (the node's last, in device memory), or null when the node has none.
const float* ControlOf(const KernelContext& ctx, bool has_control) {
  return has_control ? ctx.inputs.back()->data_as<const float>() : nullptr;
}

class CudaAdamWKernel final : public AdamWKernelBase {
 public:
  using AdamWKernelBase::AdamWKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const AdamWScalars s, StepScalars(ctx));
    const std::vector<UpdateTensors> table = UpdateTable(ctx, n_, 2, 4, 3);
    return CudaLaunchStatus(
        cuda::LaunchAdamW(dtype(), ComputeAdamWCoefficients(s), ControlOf(ctx, control_),
                          table.data(), table.size(), NativeStream(ctx)),
        "AdamW kernel");
  }
};

class CudaSgdKernel final : public SgdKernelBase {
 public:
  using SgdKernelBase::SgdKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const float lr = *ctx.inputs[0]->data_as<const float>();
    const std::vector<UpdateTensors> table = UpdateTable(ctx, n_, 1, 2, 1);
    return CudaLaunchStatus(cuda::LaunchSgd(dtype(), lr, ControlOf(ctx, control_), table.data(),
                                            table.size(), NativeStream(ctx)),
                            "SGD kernel");
  }
};

class CudaAdamKernel final : public OnnxOptimizerKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const size_t n = OptimizerParams(info);
    ZG_ASSIGN_OR_RETURN(AdamAttrs attrs, ParseAdamAttrs(*info.node));
    return std::unique_ptr<OpKernel>(new CudaAdamKernel(info, n, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const double r = ReadRate(*ctx.inputs[0]);
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const double a = attrs_.alpha;
    const double b = attrs_.beta;
    const cuda::OnnxAdamScalars s{AdamStepRate(r, t, a, b),
                                  a,
                                  1 - a,
                                  b,
                                  1 - b,
                                  attrs_.epsilon,
                                  attrs_.norm,
                                  1 - static_cast<double>(attrs_.norm_post)};
    const std::vector<UpdateTensors> table = UpdateTable(ctx, n_, 2, 4, 3);
    return CudaLaunchStatus(
        cuda::LaunchOnnxAdam(dtype(), s, table.data(), table.size(), NativeStream(ctx)),
        "Adam kernel");
  }

 private:
  CudaAdamKernel(const KernelInfo& info, size_t n, AdamAttrs attrs)
      : OnnxOptimizerKernelBase(info, n), attrs_(attrs) {}
  const AdamAttrs attrs_;
};

class CudaMomentumKernel final : public OnnxOptimizerKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const size_t n = OptimizerParams(info);
    ZG_ASSIGN_OR_RETURN(MomentumAttrs attrs, ParseMomentumAttrs(*info.node));
    return std::unique_ptr<OpKernel>(new CudaMomentumKernel(info, n, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const cuda::OnnxMomentumScalars s{ReadRate(*ctx.inputs[0]), attrs_.alpha,
                                      t > 0 ? attrs_.beta : 1.0, attrs_.norm, attrs_.nesterov};
    const std::vector<UpdateTensors> table = UpdateTable(ctx, n_, 2, 3, 2);
    return CudaLaunchStatus(
        cuda::LaunchOnnxMomentum(dtype(), s, table.data(), table.size(), NativeStream(ctx)),
        "Momentum kernel");
  }

 private:
  CudaMomentumKernel(const KernelInfo& info, size_t n, MomentumAttrs attrs)
      : OnnxOptimizerKernelBase(info, n), attrs_(attrs) {}
  const MomentumAttrs attrs_;
};

class CudaAdagradKernel final : public OnnxOptimizerKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const size_t n = OptimizerParams(info);
    ZG_ASSIGN_OR_RETURN(AdagradAttrs attrs, ParseAdagradAttrs(*info.node));
    return std::unique_ptr<OpKernel>(new CudaAdagradKernel(info, n, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const double r = ReadRate(*ctx.inputs[0]);
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const cuda::OnnxAdagradScalars s{AdagradRate(r, t, attrs_.decay), attrs_.epsilon, attrs_.norm};
    const std::vector<UpdateTensors> table = UpdateTable(ctx, n_, 2, 3, 2);
    return CudaLaunchStatus(
        cuda::LaunchOnnxAdagrad(dtype(), s, table.data(), table.size(), NativeStream(ctx)),
        "Adagrad kernel");
  }

 private:
  CudaAdagradKernel(const KernelInfo& info, size_t n, AdagradAttrs attrs)
      : OnnxOptimizerKernelBase(info, n), attrs_(attrs) {}
  const AdagradAttrs attrs_;
};

}  // namespace

Status RegisterCudaOptimizerKernels(KernelRegistry& registry) {
  constexpr auto kCuda = DeviceType::kCuda;
  const std::string domain(kZerographDomain);
  // The step's scalars are host inputs on CUDA (on the CPU all memory is the host's).
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "AdamW",
                                        kCuda,
                                        GradientDtypes::Vector(),
                                        2,
                                        {0, 1},
                                        MakeKernelWithAttrs<CudaAdamWKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "SGD",
                                        kCuda,
                                        GradientDtypes::Vector(),
                                        1,
                                        {0},
                                        MakeKernelWithAttrs<CudaSgdKernel>}));
  const std::string training(kTrainingDomain);
  ZG_RETURN_IF_ERROR(registry.Register(
      {training, "Adam", kCuda, RateDtypes::Vector(), 2, {0, 1}, &CudaAdamKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {training, "Momentum", kCuda, RateDtypes::Vector(), 2, {0, 1}, &CudaMomentumKernel::Create}));
  return registry.Register(
      {training, "Adagrad", kCuda, RateDtypes::Vector(), 2, {0, 1}, &CudaAdagradKernel::Create});
}

}  // namespace zerograph::runtime
