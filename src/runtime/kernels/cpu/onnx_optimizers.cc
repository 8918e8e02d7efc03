// ONNX ai.onnx.preview.training Adam, Momentum and Adagrad (version 1), multi-tensor, exactly as
// ONNX's reference (research/formats.md §2.3), element-wise in the tensor's type with
// Gr = norm_coefficient·X + G:
//   Adam:     V' = α·V + (1−α)·Gr;  H' = β·H + (1−β)·Gr²;  Hs = √H' + ε
//             Ra = T > 0 ? R·√(1−β^T)/(1−α^T) : R;  X' = (1 − norm_coefficient_post)·(X −
//             Ra·(V'/Hs))
//   Momentum: β' = T > 0 ? β : 1;  V' = α·V + β'·Gr
//             standard: X' = X − R·V';  nesterov: X' = X − R·(Gr + α·V')
//   Adagrad:  r = R / (1 + T·decay_factor);  H' = H + Gr²;  X' = X − r·Gr / (√H' + ε)
// Inputs R (float or double scalar), T (int64 scalar), then all X, all G, then the states.

#include <cmath>
#include <memory>
#include <string>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/onnx_optimizer_shapes.h"

namespace zerograph::runtime {
namespace {

// The CPU's frame over OnnxOptimizerKernelBase: typed pointers to group members.
template <typename T>
class OnnxOptimizerKernel : public OnnxOptimizerKernelBase {
 protected:
  using OnnxOptimizerKernelBase::OnnxOptimizerKernelBase;

  const T* In(const KernelContext& ctx, size_t group, size_t i) const {
    return ctx.inputs[2 + group * n_ + i]->template data_as<const T>();
  }
  // Output group 0 is X', 1.. the states.
  T* Out(const KernelContext& ctx, size_t group, size_t i) const {
    return ctx.outputs[group * n_ + i]->template data_as<T>();
  }
  int64_t Numel(const KernelContext& ctx, size_t i) const { return ctx.inputs[2 + i]->numel(); }
};

template <typename T>
class AdamKernel final : public OnnxOptimizerKernel<T> {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    const size_t n = OptimizerParams(info);
    ZG_ASSIGN_OR_RETURN(AdamAttrs attrs, ParseAdamAttrs(node));
    return std::unique_ptr<OpKernel>(new AdamKernel(info, n, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const double r = ReadRate(*ctx.inputs[0]);
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const double a = attrs_.alpha;
    const double b = attrs_.beta;
    const T ra = static_cast<T>(AdamStepRate(r, t, a, b));
    const T alpha = static_cast<T>(a), one_minus_alpha = static_cast<T>(1 - a);
    const T beta = static_cast<T>(b), one_minus_beta = static_cast<T>(1 - b);
    const T eps = static_cast<T>(attrs_.epsilon), norm = static_cast<T>(attrs_.norm);
    const T post = static_cast<T>(1 - static_cast<double>(attrs_.norm_post));
    for (size_t i = 0; i < this->n_; ++i) {
      const T* x = this->In(ctx, 0, i);
      const T* g = this->In(ctx, 1, i);
      const T* v = this->In(ctx, 2, i);
      const T* h = this->In(ctx, 3, i);
      T* x_out = this->Out(ctx, 0, i);
      T* v_out = this->Out(ctx, 1, i);
      T* h_out = this->Out(ctx, 2, i);
      const int64_t count = this->Numel(ctx, i);
#pragma GCC ivdep
      for (int64_t j = 0; j < count; ++j) {
        const T gr = norm * x[j] + g[j];
        const T v_new = alpha * v[j] + one_minus_alpha * gr;
        const T h_new = beta * h[j] + one_minus_beta * (gr * gr);
        const T h_sqrt = std::sqrt(h_new) + eps;
        x_out[j] = post * (x[j] - ra * (v_new / h_sqrt));
        v_out[j] = v_new;
        h_out[j] = h_new;
      }
    }
    return Status::Ok();
  }

 private:
  AdamKernel(const KernelInfo& info, size_t n, AdamAttrs attrs)
      : OnnxOptimizerKernel<T>(info, n), attrs_(attrs) {}
  const AdamAttrs attrs_;
};

template <typename T>
class MomentumKernel final : public OnnxOptimizerKernel<T> {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    const size_t n = OptimizerParams(info);
    ZG_ASSIGN_OR_RETURN(MomentumAttrs attrs, ParseMomentumAttrs(node));
    return std::unique_ptr<OpKernel>(new MomentumKernel(info, n, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const T r = static_cast<T>(ReadRate(*ctx.inputs[0]));
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const T alpha = static_cast<T>(attrs_.alpha);
    const T beta = t > 0 ? static_cast<T>(attrs_.beta) : T(1);
    const T norm = static_cast<T>(attrs_.norm);
    for (size_t i = 0; i < this->n_; ++i) {
      const T* x = this->In(ctx, 0, i);
      const T* g = this->In(ctx, 1, i);
      const T* v = this->In(ctx, 2, i);
      T* x_out = this->Out(ctx, 0, i);
      T* v_out = this->Out(ctx, 1, i);
      const int64_t count = this->Numel(ctx, i);
      if (attrs_.nesterov) {
#pragma GCC ivdep
        for (int64_t j = 0; j < count; ++j) {
          const T gr = norm * x[j] + g[j];
          const T v_new = alpha * v[j] + beta * gr;
          x_out[j] = x[j] - r * (gr + alpha * v_new);
          v_out[j] = v_new;
        }
      } else {
#pragma GCC ivdep
        for (int64_t j = 0; j < count; ++j) {
          const T gr = norm * x[j] + g[j];
          const T v_new = alpha * v[j] + beta * gr;
          x_out[j] = x[j] - r * v_new;
          v_out[j] = v_new;
        }
      }
    }
    return Status::Ok();
  }

 private:
  MomentumKernel(const KernelInfo& info, size_t n, MomentumAttrs attrs)
      : OnnxOptimizerKernel<T>(info, n), attrs_(attrs) {}
  const MomentumAttrs attrs_;
};

template <typename T>
class AdagradKernel final : public OnnxOptimizerKernel<T> {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    const size_t n = OptimizerParams(info);
    ZG_ASSIGN_OR_RETURN(AdagradAttrs attrs, ParseAdagradAttrs(node));
    return std::unique_ptr<OpKernel>(new AdagradKernel(info, n, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const double r = ReadRate(*ctx.inputs[0]);
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const T rate = static_cast<T>(AdagradRate(r, t, attrs_.decay));
    const T eps = static_cast<T>(attrs_.epsilon);
    const T norm = static_cast<T>(attrs_.norm);
    for (size_t i = 0; i < this->n_; ++i) {
      const T* x = this->In(ctx, 0, i);
      const T* g = this->In(ctx, 1, i);
      const T* h = this->In(ctx, 2, i);
      T* x_out = this->Out(ctx, 0, i);
      T* h_out = this->Out(ctx, 1, i);
      const int64_t count = this->Numel(ctx, i);
#pragma GCC ivdep
      for (int64_t j = 0; j < count; ++j) {
        const T gr = norm * x[j] + g[j];
        const T h_new = h[j] + gr * gr;
        x_out[j] = x[j] - rate * gr / (std::sqrt(h_new) + eps);
        h_out[j] = h_new;
      }
    }
    return Status::Ok();
  }

 private:
  AdagradKernel(const KernelInfo& info, size_t n, AdagradAttrs attrs)
      : OnnxOptimizerKernel<T>(info, n), attrs_(attrs) {}
  const AdagradAttrs attrs_;
};

}  // namespace

Status RegisterCpuOnnxOptimizerKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::string domain(kTrainingDomain);
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Adam",
                                        kCpu,
                                        RateDtypes::Vector(),
                                        2,
                                        {},
                                        TypedFactory<AdamKernel, RateDtypes>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Momentum",
                                        kCpu,
                                        RateDtypes::Vector(),
                                        2,
                                        {},
                                        TypedFactory<MomentumKernel, RateDtypes>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Adagrad",
                                        kCpu,
                                        RateDtypes::Vector(),
                                        2,
                                        {},
                                        TypedFactory<AdagradKernel, RateDtypes>::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
