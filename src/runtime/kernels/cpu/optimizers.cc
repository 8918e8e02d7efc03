// org.zerograph AdamW and SGD (docs/formats.md), multi-tensor with ONNX's input layout:
//   AdamW(lr, step, X1..Xn, G1..Gn, M1..Mn, V1..Vn[, control]) -> (X1'..Xn', M1'..Mn', V1'..Vn')
//   SGD(lr, X1..Xn, G1..Gn[, control]) -> (X1'..Xn'):  X ← X − lr·(c0·G)
// lr is a float scalar, step an int64 scalar; X, G and the states share one dtype (fp32, fp16 or
// bf16, computed in fp32). Each update may run in place. The optional control (fp32[3]) scales
// the gradients by c0 = control[0] inside the loop, and control[1] != 0 skips the update.

#include <cmath>
#include <memory>

#include "runtime/kernels/cpu/adamw_update.h"
#include "runtime/kernels/cpu/avx2_narrow_loops.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/optimizer_shapes.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {

template <typename T>
void AdamWUpdate(const AdamWScalars& s, float grad_scale, int64_t n, const T* x, const T* g,
                 const T* m, const T* v, T* x_out, T* m_out, T* v_out) {
  const AdamWCoefficients c = ComputeAdamWCoefficients(s);
  const float pre_decay = c.pre_decay;
  const float step_size = c.step_size;
  const float inv_sqrt_bc2 = c.inv_sqrt_bc2;
  const float post_decay = c.post_decay;
  const float b1 = c.b1;
  const float b2 = c.b2;
  const float one_minus_b1 = c.one_minus_b1;
  const float one_minus_b2 = c.one_minus_b2;
  const float eps = c.eps;
  int64_t first = 0;
  if constexpr (kIsNarrowFloat<T>) {
    first = AdamWUpdateAvx2(FormatOf(x), c, grad_scale, n, Bits(x), Bits(g), Bits(m), Bits(v),
                            Bits(x_out), Bits(m_out), Bits(v_out));
  }
#pragma GCC ivdep
  for (int64_t i = first; i < n; ++i) {
    const float gi = Load(g[i]) * grad_scale;
    const float mi = b1 * Load(m[i]) + one_minus_b1 * gi;
    const float vi = b2 * Load(v[i]) + one_minus_b2 * (gi * gi);
    const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
    x_out[i] = Store<T>((Load(x[i]) * pre_decay - step_size * mi / denom) * post_decay);
    m_out[i] = Store<T>(mi);
    v_out[i] = Store<T>(vi);
  }
}

template void AdamWUpdate<float>(const AdamWScalars&, float, int64_t, const float*, const float*,
                                 const float*, const float*, float*, float*, float*);
template void AdamWUpdate<Float16>(const AdamWScalars&, float, int64_t, const Float16*,
                                   const Float16*, const Float16*, const Float16*, Float16*,
                                   Float16*, Float16*);
template void AdamWUpdate<BFloat16>(const AdamWScalars&, float, int64_t, const BFloat16*,
                                    const BFloat16*, const BFloat16*, const BFloat16*, BFloat16*,
                                    BFloat16*, BFloat16*);

namespace {

// The control input's gradient scale and skip flag; without one, scale 1 (exact: the update
// rounds as it did without) and no skip.
struct Control {
  float grad_scale = 1.0f;
  bool skip = false;
};

Control ReadControl(const KernelContext& ctx, bool has_control) {
  if (!has_control) return {};
  const float* control = ctx.inputs.back()->data_as<const float>();
  return {control[0], control[1] != 0.0f};
}

// A skipped update: each output (X', then the states) equals its input, copied unless the
// executor runs the update in place. The n-tensor groups of inputs start at `first`.
void KeepInputs(const KernelContext& ctx, size_t n, size_t first) {
  for (size_t o = 0; o < ctx.outputs.size(); ++o) {
    const size_t group = o / n;  // 0: X', k: state k; the inputs run X, G, the states
    const size_t input_group = group == 0 ? 0 : group + 1;
    CopyUnlessSame(*ctx.inputs[first + input_group * n + o % n], *ctx.outputs[o]);
  }
}

template <typename T>
class AdamWKernel final : public AdamWKernelBase {
 public:
  using AdamWKernelBase::AdamWKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<AdamWKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const AdamWScalars s, StepScalars(ctx));
    const Control control = ReadControl(ctx, control_);
    if (control.skip) {
      KeepInputs(ctx, n_, 2);
      return Status::Ok();
    }
    for (size_t i = 0; i < n_; ++i) {
      auto in = [&](size_t group) { return ctx.inputs[2 + group * n_ + i]->data_as<const T>(); };
      auto out = [&](size_t group) { return ctx.outputs[group * n_ + i]->data_as<T>(); };
      AdamWUpdate<T>(s, control.grad_scale, ctx.outputs[i]->numel(), in(0), in(1), in(2), in(3),
                     out(0), out(1), out(2));
    }
    return Status::Ok();
  }
};

template <typename T>
class SgdKernel final : public SgdKernelBase {
 public:
  using SgdKernelBase::SgdKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<SgdKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const float lr = *ctx.inputs[0]->data_as<const float>();
    const Control control = ReadControl(ctx, control_);
    if (control.skip) {
      KeepInputs(ctx, n_, 1);
      return Status::Ok();
    }
    const float scale = control.grad_scale;
    for (size_t i = 0; i < n_; ++i) {
      const T* x = ctx.inputs[1 + i]->data_as<const T>();
      const T* g = ctx.inputs[1 + n_ + i]->data_as<const T>();
      T* y = ctx.outputs[i]->data_as<T>();
      const int64_t n = ctx.outputs[i]->numel();
      int64_t first = 0;
      if constexpr (kIsNarrowFloat<T>) {
        first = SgdUpdateAvx2(FormatOf(x), lr, scale, n, Bits(x), Bits(g), Bits(y));
      }
#pragma GCC ivdep
      for (int64_t j = first; j < n; ++j) {
        y[j] = Store<T>(Load(x[j]) - lr * (Load(g[j]) * scale));
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuOptimizerKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::string domain(kZerographDomain);
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "AdamW",
                                        kCpu,
                                        GradientDtypes::Vector(),
                                        2,
                                        {},
                                        TypedFactory<AdamWKernel, GradientDtypes>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "SGD",
                                        kCpu,
                                        GradientDtypes::Vector(),
                                        1,
                                        {},
                                        TypedFactory<SgdKernel, GradientDtypes>::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
