// org.zerograph AdamW and SGD (DESIGN §4), multi-tensor with ONNX's input layout:
//   AdamW(lr, step, X1..Xn, G1..Gn, M1..Mn, V1..Vn) -> (X1'..Xn', M1'..Mn', V1'..Vn')
//   SGD(lr, X1..Xn, G1..Gn) -> (X1'..Xn'):  X ← X − lr·G
// lr is a float scalar, step an int64 scalar; X, G and the states share one dtype (fp32, fp16 or
// bf16, computed in fp32). Each update may run in place.

#include <cmath>
#include <memory>

#include "runtime/kernels/cpu/adamw_update.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {

template <typename T>
void AdamWUpdate(const AdamWScalars& s, int64_t n, const T* x, const T* g, const T* m, const T* v,
                 T* x_out, T* m_out, T* v_out) {
  // Scalars in double, rounded once, as PyTorch computes them in Python.
  const double t = static_cast<double>(s.step);
  const float decay = static_cast<float>(1.0 - static_cast<double>(s.lr) * s.weight_decay);
  const float step_size = static_cast<float>(s.lr / (1.0 - std::pow(double{s.beta1}, t)));
  const float inv_sqrt_bc2 =
      static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double{s.beta2}, t)));
  const float b1 = s.beta1;
  const float b2 = s.beta2;
  const float one_minus_b1 = static_cast<float>(1.0 - s.beta1);
  const float one_minus_b2 = static_cast<float>(1.0 - s.beta2);
  const float eps = s.epsilon;
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    const float gi = Load(g[i]);
    const float mi = b1 * Load(m[i]) + one_minus_b1 * gi;
    const float vi = b2 * Load(v[i]) + one_minus_b2 * (gi * gi);
    const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
    x_out[i] = Store<T>(Load(x[i]) * decay - step_size * mi / denom);
    m_out[i] = Store<T>(mi);
    v_out[i] = Store<T>(vi);
  }
}

template void AdamWUpdate<float>(const AdamWScalars&, int64_t, const float*, const float*,
                                 const float*, const float*, float*, float*, float*);
template void AdamWUpdate<Float16>(const AdamWScalars&, int64_t, const Float16*, const Float16*,
                                   const Float16*, const Float16*, Float16*, Float16*, Float16*);
template void AdamWUpdate<BFloat16>(const AdamWScalars&, int64_t, const BFloat16*, const BFloat16*,
                                    const BFloat16*, const BFloat16*, BFloat16*, BFloat16*,
                                    BFloat16*);

namespace {

// The scalar inputs every optimizer starts with.
Status CheckScalar(const TensorSpec* spec, DataType dtype, std::string_view what) {
  ZG_RETURN_IF_NOT(spec != nullptr, what, " is missing");
  ZG_RETURN_IF_NOT(spec->dtype == dtype && NumElements(spec->shape) == 1, what, " must be a ",
                   DataTypeName(dtype), " scalar, got ", DataTypeName(spec->dtype),
                   ShapeToString(spec->shape));
  return Status::Ok();
}

// Checks groups of n tensors starting at input `first` (X, then G, then the states) against the
// X of the same index, and returns one output per X per `output_groups`, in place over the
// matching input group.
StatusOr<std::vector<OutputInfo>> InferUpdateOutputs(const ShapeContext& ctx, DataType dtype,
                                                     size_t first, size_t n, size_t groups,
                                                     std::span<const size_t> output_groups) {
  for (size_t i = 0; i < n; ++i) {
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, first + i));
    ZG_RETURN_IF_NOT(x->dtype == dtype, "X", i + 1, " is ", DataTypeName(x->dtype), ", expected ",
                     DataTypeName(dtype));
    for (size_t group = 1; group < groups; ++group) {
      const size_t index = first + group * n + i;
      ZG_ASSIGN_OR_RETURN(const TensorSpec* other, RequiredInput(ctx, index));
      ZG_RETURN_IF_NOT(*other == *x, "input ", index, " is ", DataTypeName(other->dtype),
                       ShapeToString(other->shape), " but X", i + 1, " is ", DataTypeName(x->dtype),
                       ShapeToString(x->shape));
    }
  }
  std::vector<OutputInfo> outputs;
  for (size_t group : output_groups) {
    for (size_t i = 0; i < n; ++i) {
      const int input = static_cast<int>(first + group * n + i);
      outputs.push_back(OutputInfo{*ctx.input(static_cast<size_t>(input)), std::nullopt, input});
    }
  }
  return outputs;
}

template <typename T>
class AdamWKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    const size_t inputs = node.num_inputs();
    ZG_RETURN_IF_NOT(inputs >= 6 && (inputs - 2) % 4 == 0,
                     "expects lr, step and 4 groups of n tensors, got ", inputs, " inputs");
    const size_t n = (inputs - 2) / 4;
    ZG_RETURN_IF_NOT(node.num_outputs() == 3 * n, "expects ", 3 * n, " outputs, got ",
                     node.num_outputs());
    AdamWScalars s;
    ZG_ASSIGN_OR_RETURN(s.beta1, FloatAttr(node, "beta1", 0.9f));
    ZG_ASSIGN_OR_RETURN(s.beta2, FloatAttr(node, "beta2", 0.999f));
    ZG_ASSIGN_OR_RETURN(s.epsilon, FloatAttr(node, "epsilon", 1e-8f));
    ZG_ASSIGN_OR_RETURN(s.weight_decay, FloatAttr(node, "weight_decay", 0.01f));
    return std::unique_ptr<OpKernel>(new AdamWKernel(info, n, s));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckScalar(ctx.input(0), DataType::kFloat32, "lr"));
    ZG_RETURN_IF_ERROR(CheckScalar(ctx.input(1), DataType::kInt64, "step"));
    const size_t groups[] = {0, 2, 3};  // X', M', V'
    return InferUpdateOutputs(ctx, dtype(), 2, n_, 4, groups);
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    AdamWScalars s = scalars_;
    s.lr = *ctx.inputs[0]->data_as<const float>();
    s.step = *ctx.inputs[1]->data_as<const int64_t>();
    ZG_RETURN_IF_NOT(s.step >= 1, "step must count updates from 1, got ", s.step);
    for (size_t i = 0; i < n_; ++i) {
      auto in = [&](size_t group) { return ctx.inputs[2 + group * n_ + i]->data_as<const T>(); };
      auto out = [&](size_t group) { return ctx.outputs[group * n_ + i]->data_as<T>(); };
      AdamWUpdate<T>(s, ctx.outputs[i]->numel(), in(0), in(1), in(2), in(3), out(0), out(1),
                     out(2));
    }
    return Status::Ok();
  }

 private:
  AdamWKernel(const KernelInfo& info, size_t n, AdamWScalars scalars)
      : OpKernel(info), n_(n), scalars_(scalars) {}
  size_t n_;
  AdamWScalars scalars_;
};

template <typename T>
class SgdKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const size_t inputs = info.node->num_inputs();
    ZG_RETURN_IF_NOT(inputs >= 3 && (inputs - 1) % 2 == 0,
                     "expects lr and 2 groups of n tensors, got ", inputs, " inputs");
    const size_t n = (inputs - 1) / 2;
    ZG_RETURN_IF_NOT(info.node->num_outputs() == n, "expects ", n, " outputs, got ",
                     info.node->num_outputs());
    return std::unique_ptr<OpKernel>(new SgdKernel(info, n));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckScalar(ctx.input(0), DataType::kFloat32, "lr"));
    const size_t groups[] = {0};
    return InferUpdateOutputs(ctx, dtype(), 1, n_, 2, groups);
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    const float lr = *ctx.inputs[0]->data_as<const float>();
    for (size_t i = 0; i < n_; ++i) {
      const T* x = ctx.inputs[1 + i]->data_as<const T>();
      const T* g = ctx.inputs[1 + n_ + i]->data_as<const T>();
      T* y = ctx.outputs[i]->data_as<T>();
      const int64_t n = ctx.outputs[i]->numel();
#pragma GCC ivdep
      for (int64_t j = 0; j < n; ++j) y[j] = Store<T>(Load(x[j]) - lr * Load(g[j]));
    }
    return Status::Ok();
  }

 private:
  SgdKernel(const KernelInfo& info, size_t n) : OpKernel(info), n_(n) {}
  size_t n_;
};

}  // namespace

Status RegisterCpuOptimizerKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  const std::string domain(kZerographDomain);
  ZG_RETURN_IF_ERROR(
      registry.Register({domain,
                         "AdamW",
                         kCpu,
                         {kFloat32, kFloat16, kBFloat16},
                         2,
                         {},
                         MakeTypedKernel<AdamWKernel, kFloat32, kFloat16, kBFloat16>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({domain,
                         "SGD",
                         kCpu,
                         {kFloat32, kFloat16, kBFloat16},
                         1,
                         {},
                         MakeTypedKernel<SgdKernel, kFloat32, kFloat16, kBFloat16>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
