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

namespace zerograph::runtime {
namespace {

constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";

// R as a double, whichever floating type it has.
double ReadRate(const DeviceTensor& r) {
  return r.dtype() == DataType::kFloat64 ? *r.data_as<const double>()
                                         : static_cast<double>(*r.data_as<const float>());
}

// The common frame: n tensors per group, `groups` input groups after R and T, outputs of groups
// {0, 2, 3, ...} (X' and the new states), each in place over its input.
template <typename T>
class OnnxOptimizerKernel : public OpKernel {
 protected:
  OnnxOptimizerKernel(const KernelInfo& info, size_t n, size_t groups)
      : OpKernel(info), n_(n), groups_(groups) {}

  static StatusOr<size_t> GroupSize(const Node& node, size_t groups) {
    const size_t inputs = node.num_inputs();
    ZG_RETURN_IF_NOT(inputs >= 2 + groups && (inputs - 2) % groups == 0, "expects R, T and ",
                     groups, " groups of n tensors, got ", inputs, " inputs");
    const size_t n = (inputs - 2) / groups;
    ZG_RETURN_IF_NOT(node.num_outputs() == (groups - 1) * n, "expects ", (groups - 1) * n,
                     " outputs, got ", node.num_outputs());
    return n;
  }

  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    const TensorSpec* r = ctx.input(0);
    const TensorSpec* t = ctx.input(1);
    ZG_RETURN_IF_NOT(r != nullptr &&
                         (r->dtype == DataType::kFloat32 || r->dtype == DataType::kFloat64) &&
                         NumElements(r->shape) == 1,
                     "R must be a float or double scalar");
    ZG_RETURN_IF_NOT(t != nullptr && t->dtype == DataType::kInt64 && NumElements(t->shape) == 1,
                     "T must be an int64 scalar");
    std::vector<OutputInfo> outputs;
    for (size_t group = 0; group < groups_; ++group) {
      for (size_t i = 0; i < n_; ++i) {
        const size_t index = 2 + group * n_ + i;
        ZG_ASSIGN_OR_RETURN(const TensorSpec* spec, RequiredInput(ctx, index));
        ZG_RETURN_IF_NOT(*spec == *ctx.input(2 + i), "input ", index, " is ",
                         DataTypeName(spec->dtype), ShapeToString(spec->shape), " but X", i + 1,
                         " is ", DataTypeName(ctx.input(2 + i)->dtype),
                         ShapeToString(ctx.input(2 + i)->shape));
        if (group != 1) outputs.push_back(OutputInfo{*spec, std::nullopt, static_cast<int>(index)});
      }
    }
    return outputs;
  }

  const T* In(const KernelContext& ctx, size_t group, size_t i) const {
    return ctx.inputs[2 + group * n_ + i]->template data_as<const T>();
  }
  // Output group 0 is X', 1.. the states.
  T* Out(const KernelContext& ctx, size_t group, size_t i) const {
    return ctx.outputs[group * n_ + i]->template data_as<T>();
  }
  int64_t Numel(const KernelContext& ctx, size_t i) const { return ctx.inputs[2 + i]->numel(); }

  size_t n_;
  size_t groups_;
};

template <typename T>
class AdamKernel final : public OnnxOptimizerKernel<T> {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    ZG_ASSIGN_OR_RETURN(size_t n, OnnxOptimizerKernel<T>::GroupSize(node, 4));
    auto kernel = std::unique_ptr<AdamKernel>(new AdamKernel(info, n));
    ZG_ASSIGN_OR_RETURN(kernel->alpha_, FloatAttr(node, "alpha", 0.9f));
    ZG_ASSIGN_OR_RETURN(kernel->beta_, FloatAttr(node, "beta", 0.999f));
    ZG_ASSIGN_OR_RETURN(kernel->epsilon_, FloatAttr(node, "epsilon", 1e-6f));
    ZG_ASSIGN_OR_RETURN(kernel->norm_, FloatAttr(node, "norm_coefficient", 0.0f));
    ZG_ASSIGN_OR_RETURN(kernel->norm_post_, FloatAttr(node, "norm_coefficient_post", 0.0f));
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const double r = ReadRate(*ctx.inputs[0]);
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const double a = alpha_;
    const double b = beta_;
    const T ra = static_cast<T>(t > 0 ? r * std::sqrt(1 - std::pow(b, static_cast<double>(t))) /
                                            (1 - std::pow(a, static_cast<double>(t)))
                                      : r);
    const T alpha = static_cast<T>(a), one_minus_alpha = static_cast<T>(1 - a);
    const T beta = static_cast<T>(b), one_minus_beta = static_cast<T>(1 - b);
    const T eps = static_cast<T>(epsilon_), norm = static_cast<T>(norm_);
    const T post = static_cast<T>(1 - static_cast<double>(norm_post_));
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
  AdamKernel(const KernelInfo& info, size_t n) : OnnxOptimizerKernel<T>(info, n, 4) {}
  float alpha_ = 0, beta_ = 0, epsilon_ = 0, norm_ = 0, norm_post_ = 0;
};

template <typename T>
class MomentumKernel final : public OnnxOptimizerKernel<T> {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    ZG_ASSIGN_OR_RETURN(size_t n, OnnxOptimizerKernel<T>::GroupSize(node, 3));
    auto kernel = std::unique_ptr<MomentumKernel>(new MomentumKernel(info, n));
    // All four attributes are required by the schema.
    ZG_ASSIGN_OR_RETURN(kernel->alpha_, FloatAttr(node, "alpha"));
    ZG_ASSIGN_OR_RETURN(kernel->beta_, FloatAttr(node, "beta"));
    ZG_ASSIGN_OR_RETURN(kernel->norm_, FloatAttr(node, "norm_coefficient"));
    ZG_ASSIGN_OR_RETURN(std::string mode, StringAttr(node, "mode"));
    ZG_RETURN_IF_NOT(mode == "standard" || mode == "nesterov", "mode '", mode,
                     "' (expected 'standard' or 'nesterov')");
    kernel->nesterov_ = mode == "nesterov";
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const T r = static_cast<T>(ReadRate(*ctx.inputs[0]));
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const T alpha = static_cast<T>(alpha_);
    const T beta = t > 0 ? static_cast<T>(beta_) : T(1);
    const T norm = static_cast<T>(norm_);
    for (size_t i = 0; i < this->n_; ++i) {
      const T* x = this->In(ctx, 0, i);
      const T* g = this->In(ctx, 1, i);
      const T* v = this->In(ctx, 2, i);
      T* x_out = this->Out(ctx, 0, i);
      T* v_out = this->Out(ctx, 1, i);
      const int64_t count = this->Numel(ctx, i);
      if (nesterov_) {
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
  MomentumKernel(const KernelInfo& info, size_t n) : OnnxOptimizerKernel<T>(info, n, 3) {}
  float alpha_ = 0, beta_ = 0, norm_ = 0;
  bool nesterov_ = false;
};

template <typename T>
class AdagradKernel final : public OnnxOptimizerKernel<T> {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    ZG_ASSIGN_OR_RETURN(size_t n, OnnxOptimizerKernel<T>::GroupSize(node, 3));
    auto kernel = std::unique_ptr<AdagradKernel>(new AdagradKernel(info, n));
    ZG_ASSIGN_OR_RETURN(kernel->decay_, FloatAttr(node, "decay_factor", 0.0f));
    ZG_ASSIGN_OR_RETURN(kernel->epsilon_, FloatAttr(node, "epsilon", 1e-6f));
    ZG_ASSIGN_OR_RETURN(kernel->norm_, FloatAttr(node, "norm_coefficient", 0.0f));
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const double r = ReadRate(*ctx.inputs[0]);
    const int64_t t = *ctx.inputs[1]->data_as<const int64_t>();
    const T rate = static_cast<T>(r / (1 + static_cast<double>(t) * decay_));
    const T eps = static_cast<T>(epsilon_);
    const T norm = static_cast<T>(norm_);
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
  AdagradKernel(const KernelInfo& info, size_t n) : OnnxOptimizerKernel<T>(info, n, 3) {}
  float decay_ = 0, epsilon_ = 0, norm_ = 0;
};

}  // namespace

Status RegisterCpuOnnxOptimizerKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  const std::string domain(kTrainingDomain);
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Adam",
                                        kCpu,
                                        {kFloat32, kFloat64},
                                        2,
                                        {},
                                        MakeTypedKernel<AdamKernel, kFloat32, kFloat64>}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Momentum",
                                        kCpu,
                                        {kFloat32, kFloat64},
                                        2,
                                        {},
                                        MakeTypedKernel<MomentumKernel, kFloat32, kFloat64>}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "Adagrad",
                                        kCpu,
                                        {kFloat32, kFloat64},
                                        2,
                                        {},
                                        MakeTypedKernel<AdagradKernel, kFloat32, kFloat64>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
