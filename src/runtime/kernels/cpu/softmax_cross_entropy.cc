// The classification losses on the CPU: SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss,
// ONNX Runtime's SoftmaxCrossEntropyLossInternal, and the gradients SoftmaxCrossEntropyLossGrad
// and SoftmaxCrossEntropyLossInternalGrad. One pass over each sample's C scores; sums in double.
// Mean divides by the summed weights of the labels not ignored (their count without weights), as
// ONNX specifies.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/loss_shapes.h"

namespace zerograph::runtime {
namespace {

// The label of sample i and its weight, 0 when ignored; an out-of-range label is an error.
template <typename L, typename T>
StatusOr<double> LabelWeight(const L* labels, const T* weights, int64_t i, int64_t classes,
                             std::optional<int64_t> ignore, int64_t* label) {
  *label = static_cast<int64_t>(labels[i]);
  if (ignore && *label == *ignore) return 0.0;
  ZG_RETURN_IF_NOT(*label >= 0 && *label < classes, "label ", *label, " of sample ", i,
                   " is outside [0, ", classes, ")");
  return weights != nullptr ? static_cast<double>(Load(weights[*label])) : 1.0;
}

// Input i's elements, or null when the node omits it.
template <typename X>
const X* OptionalInput(const KernelContext& ctx, size_t i) {
  return i < ctx.inputs.size() && ctx.inputs[i] != nullptr ? ctx.inputs[i]->data_as<const X>()
                                                           : nullptr;
}

// Forward: scores (T) to the loss (O), log_prob (T) when asked. `softmax` false: the scores are
// already log-probabilities (NegativeLogLikelihoodLoss).
template <typename T>
class LossKernel final : public LossKernelBase {
 public:
  LossKernel(const KernelInfo& info, LossAttrs attrs, bool softmax)
      : LossKernelBase(info, attrs), softmax_(softmax) {}
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(LossAttrs attrs, ParseAttrs(info));
    return std::unique_ptr<OpKernel>(
        new LossKernel(info, attrs, info.node->op_type() != "NegativeLogLikelihoodLoss"));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(std::optional<int64_t> ignore, IgnoreIndex(ctx));
    return DispatchDtypes(FloatDtypes{}, ctx.outputs[0]->dtype(), [&](auto out_tag) {
      return DispatchDtype<DataType::kInt32, DataType::kInt64>(
          ctx.inputs[1]->dtype(),
          [&](auto label_tag) { return Run<decltype(out_tag), decltype(label_tag)>(ctx, ignore); });
    });
  }

 private:
  template <typename O, typename L>
  Status Run(const KernelContext& ctx, std::optional<int64_t> ignore) const {
    const DeviceTensor& scores = *ctx.inputs[0];
    const LossDims dims = LossDimsOf(scores.shape());
    const T* x = scores.data_as<const T>();
    const L* labels = ctx.inputs[1]->data_as<const L>();
    const T* weights = OptionalInput<T>(ctx, 2);
    O* loss = ctx.outputs[0]->data_as<O>();
    T* log_prob = ctx.outputs.size() > 1 && ctx.outputs[1] != nullptr ? ctx.outputs[1]->data_as<T>()
                                                                      : nullptr;
    double total = 0, weight_total = 0;
    for (int64_t n = 0; n < dims.n; ++n) {
      for (int64_t d = 0; d < dims.d; ++d) {
        const int64_t base = n * dims.c * dims.d + d;
        // log p[c] = x[c] - logsumexp(x), with the max taken out for range.
        double lse = 0;
        if (softmax_) {
          double max = -std::numeric_limits<double>::infinity();
          for (int64_t c = 0; c < dims.c; ++c) {
            max = std::max(max, static_cast<double>(Load(x[base + c * dims.d])));
          }
          double sum = 0;
          for (int64_t c = 0; c < dims.c; ++c) {
            sum += std::exp(static_cast<double>(Load(x[base + c * dims.d])) - max);
          }
          lse = max + std::log(sum);
          if (log_prob != nullptr) {
            for (int64_t c = 0; c < dims.c; ++c) {
              const int64_t at = base + c * dims.d;
              log_prob[at] = Store<T>(static_cast<ArithType<T>>(Load(x[at]) - lse));
            }
          }
        }
        const int64_t sample = n * dims.d + d;
        int64_t label = 0;
        ZG_ASSIGN_OR_RETURN(double w, LabelWeight(labels, weights, sample, dims.c, ignore, &label));
        const double l =
            w == 0 ? 0.0 : -(static_cast<double>(Load(x[base + label * dims.d])) - lse) * w;
        if (attrs_.reduction == LossReduction::kNone) {
          loss[sample] = Store<O>(static_cast<ArithType<O>>(l));
        }
        total += l;
        weight_total += w;
      }
    }
    if (attrs_.reduction == LossReduction::kSum)
      loss[0] = Store<O>(static_cast<ArithType<O>>(total));
    if (attrs_.reduction == LossReduction::kMean) {
      loss[0] = Store<O>(static_cast<ArithType<O>>(total / weight_total));
    }
    return Status::Ok();
  }

  const bool softmax_;
};

// d_logits = dY' · w[label] · (exp(log_prob) - onehot(label)) (+ bias), where dY' is dY per sample
// (none), dY (sum) or dY / the summed weights (mean); 0 for ignored samples.
template <typename T>
class LossGradKernel final : public LossKernelBase {
 public:
  using LossKernelBase::LossKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<LossGradKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(std::optional<int64_t> ignore, IgnoreIndex(ctx));
    return DispatchDtypes(FloatDtypes{}, ctx.outputs[0]->dtype(), [&](auto out_tag) {
      return DispatchDtype<DataType::kInt32, DataType::kInt64>(
          ctx.inputs[2]->dtype(),
          [&](auto label_tag) { return Run<decltype(out_tag), decltype(label_tag)>(ctx, ignore); });
    });
  }

 private:
  template <typename O, typename L>
  Status Run(const KernelContext& ctx, std::optional<int64_t> ignore) const {
    const DeviceTensor& dy_tensor = *ctx.inputs[0];
    const LossDims dims = LossDimsOf(ctx.inputs[1]->shape());
    const T* dy = dy_tensor.data_as<const T>();
    const T* log_prob = ctx.inputs[1]->data_as<const T>();
    const L* labels = ctx.inputs[2]->data_as<const L>();
    const T* weights = OptionalInput<T>(ctx, 3);
    const O* bias = OptionalInput<O>(ctx, 5);
    O* dx = ctx.outputs[0]->data_as<O>();
    const bool per_sample = attrs_.reduction == LossReduction::kNone;
    ZG_RETURN_IF_NOT(per_sample ? dy_tensor.numel() == dims.samples() : dy_tensor.numel() == 1,
                     "dY ", dy_tensor.ToString(), " does not fit reduction ",
                     per_sample ? "none" : "sum or mean");
    double scale = per_sample ? 1.0 : static_cast<double>(Load(dy[0]));
    if (attrs_.reduction == LossReduction::kMean) {
      double weight_total = 0;
      for (int64_t i = 0; i < dims.samples(); ++i) {
        int64_t label = 0;
        ZG_ASSIGN_OR_RETURN(double w, LabelWeight(labels, weights, i, dims.c, ignore, &label));
        weight_total += w;
      }
      scale /= weight_total;
    }
    for (int64_t n = 0; n < dims.n; ++n) {
      for (int64_t d = 0; d < dims.d; ++d) {
        const int64_t sample = n * dims.d + d;
        const int64_t base = n * dims.c * dims.d + d;
        int64_t label = 0;
        ZG_ASSIGN_OR_RETURN(double w, LabelWeight(labels, weights, sample, dims.c, ignore, &label));
        const double g = w * (per_sample ? static_cast<double>(Load(dy[sample])) : scale);
        for (int64_t c = 0; c < dims.c; ++c) {
          const int64_t at = base + c * dims.d;
          double v = w == 0 ? 0.0
                            : g * (std::exp(static_cast<double>(Load(log_prob[at]))) -
                                   (c == label ? 1.0 : 0.0));
          if (bias != nullptr) v += static_cast<double>(Load(bias[at]));
          dx[at] = Store<O>(static_cast<ArithType<O>>(v));
        }
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuLossKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const auto forward = TypedFactory<LossKernel, FloatDtypes>::Create;
  const auto grad = TypedFactory<LossGradKernel, FloatDtypes>::Create;
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "SoftmaxCrossEntropyLoss", kCpu, FloatDtypes::Vector(), 0, {}, forward}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "NegativeLogLikelihoodLoss", kCpu, IeeeFloatDtypes::Vector(), 0, {}, forward}));
  ZG_RETURN_IF_ERROR(registry.Register({"com.microsoft",
                                        "SoftmaxCrossEntropyLossInternal",
                                        kCpu,
                                        FloatDtypes::Vector(),
                                        0,
                                        {},
                                        forward}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"com.microsoft", "SoftmaxCrossEntropyLossGrad", kCpu, FloatDtypes::Vector(), 0, {}, grad}));
  return registry.Register({"com.microsoft",
                            "SoftmaxCrossEntropyLossInternalGrad",
                            kCpu,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            grad});
}

}  // namespace zerograph::runtime
