// Softmax and LogSoftmax (ONNX, both axis semantics) and their gradients SoftmaxGrad_13 and
// LogSoftmaxGrad_13 (ONNX Runtime, com.microsoft), along the middle of an [outer, n, inner]
// layout. The row's maximum is subtracted before exp(), so large inputs do not overflow; 16-bit
// floats compute in fp32. When inner is 1 (the axis is the last, or the input is coerced to 2-D)
// each row is contiguous; otherwise the loops run over inner, contiguous, for each of the n.

#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/vector_math.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/softmax_shapes.h"

namespace zerograph::runtime {
namespace {

enum class SoftmaxOp { kSoftmax, kLogSoftmax, kSoftmaxGrad, kLogSoftmaxGrad };

// A contiguous row of a forward op (inner is 1: the axis is the last, or the input is coerced to
// 2-D), in loops over the row alone, which the compiler vectorizes.
template <SoftmaxOp kOp, typename T>
void SoftmaxRow(const T* x, T* y, int64_t n) {
  using A = ArithType<T>;
  A max = -INFINITY;
  if constexpr (std::is_same_v<T, float>) {
    // Eight running maxima, which vectorize: one carried through memory took most of the op's
    // time. (NaN is skipped here, as by std::max; exp() then makes the row NaN.)
    float lane[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                     -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
      for (int j = 0; j < 8; ++j) lane[j] = lane[j] < x[k + j] ? x[k + j] : lane[j];
    }
    for (; k < n; ++k) max = max < x[k] ? x[k] : max;
    for (float v : lane) max = max < v ? v : max;
  } else {
    for (int64_t k = 0; k < n; ++k) max = std::max(max, Load(x[k]));
  }
  A sum = 0;
  if constexpr (kOp == SoftmaxOp::kSoftmax && std::is_same_v<T, float>) {
    // exp() eight at a time (vector_math.h): the scalar exp was most of the op's time. Below
    // kLow, exp() is under 1.7e-38 and taken as 0: that keeps a masked row's -inf (and other
    // underflows) off libmvec's slow path, which does those lanes one at a time, and moves y by
    // less than 1.7e-38 where it is not already 0.
    constexpr float kLow = -87.0f;
    for (int64_t k = 0; k < n; ++k) {
      const float t = x[k] - max;
      y[k] = t < kLow ? kLow : t;  // NaN stays NaN
    }
    VectorExp(y, y, n);
    for (int64_t k = 0; k < n; ++k) {
      if (x[k] - max < kLow) y[k] = 0.0f;
      sum += y[k];
    }
  } else {
    for (int64_t k = 0; k < n; ++k) {
      const A e = std::exp(Load(x[k]) - max);
      sum += e;
      if constexpr (kOp == SoftmaxOp::kSoftmax && !kIsNarrowFloat<T>) y[k] = e;
    }
  }
  if constexpr (kOp == SoftmaxOp::kSoftmax) {
    const A inv = A(1) / sum;
    for (int64_t k = 0; k < n; ++k) {
      // A 16-bit y would hold exp() rounded: recompute it instead.
      const A e = kIsNarrowFloat<T> ? std::exp(Load(x[k]) - max) : Load(y[k]);
      y[k] = Store<T>(e * inv);
    }
  } else {
    // (x - max) - log(sum): x - (max + log(sum)) would round at max's magnitude.
    const A log_sum = std::log(sum);
    for (int64_t k = 0; k < n; ++k) y[k] = Store<T>(Load(x[k]) - max - log_sum);
  }
}

// One [n, inner] block of a forward op: y from x, the same passes as SoftmaxRow for each of the
// inner columns at once.
template <SoftmaxOp kOp, typename T>
void SoftmaxBlock(const T* x, T* y, int64_t n, int64_t inner, std::vector<ArithType<T>>& max,
                  std::vector<ArithType<T>>& sum) {
  using A = ArithType<T>;
  max.assign(static_cast<size_t>(inner), -INFINITY);
  sum.assign(static_cast<size_t>(inner), A(0));
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < inner; ++j) {
      max[static_cast<size_t>(j)] = std::max(max[static_cast<size_t>(j)], Load(x[k * inner + j]));
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < inner; ++j) {
      const A e = std::exp(Load(x[k * inner + j]) - max[static_cast<size_t>(j)]);
      sum[static_cast<size_t>(j)] += e;
      if constexpr (kOp == SoftmaxOp::kSoftmax && !kIsNarrowFloat<T>) y[k * inner + j] = e;
    }
  }
  for (int64_t j = 0; j < inner; ++j) {
    A& s = sum[static_cast<size_t>(j)];
    s = kOp == SoftmaxOp::kSoftmax ? A(1) / s : std::log(s);
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < inner; ++j) {
      if constexpr (kOp == SoftmaxOp::kSoftmax) {
        const A e = kIsNarrowFloat<T>
                        ? std::exp(Load(x[k * inner + j]) - max[static_cast<size_t>(j)])
                        : Load(y[k * inner + j]);
        y[k * inner + j] = Store<T>(e * sum[static_cast<size_t>(j)]);
      } else {
        y[k * inner + j] = Store<T>(Load(x[k * inner + j]) - max[static_cast<size_t>(j)] -
                                    sum[static_cast<size_t>(j)]);
      }
    }
  }
}

// One [n, inner] block of a gradient: dx from dy and the forward's output y.
//   SoftmaxGrad:    dx = y · (dy - Σ dy·y)
//   LogSoftmaxGrad: dx = dy - exp(y) · Σ dy
template <SoftmaxOp kOp, typename T>
void SoftmaxGradBlock(const T* dy, const T* y, T* dx, int64_t n, int64_t inner,
                      std::vector<ArithType<T>>& sum) {
  using A = ArithType<T>;
  if constexpr (kOp == SoftmaxOp::kSoftmaxGrad && std::is_same_v<T, float>) {
    if (inner == 1) {  // a contiguous row: Σ dy·y in eight lanes, which vectorize
      float lane[8] = {};
      int64_t k = 0;
      for (; k + 8 <= n; k += 8) {
        for (int j = 0; j < 8; ++j) lane[j] += dy[k + j] * y[k + j];
      }
      float s = 0;
      for (; k < n; ++k) s += dy[k] * y[k];
      for (float v : lane) s += v;
      for (k = 0; k < n; ++k) dx[k] = y[k] * (dy[k] - s);
      return;
    }
  }
  sum.assign(static_cast<size_t>(inner), A(0));
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < inner; ++j) {
      const A g = Load(dy[k * inner + j]);
      sum[static_cast<size_t>(j)] +=
          kOp == SoftmaxOp::kSoftmaxGrad ? g * Load(y[k * inner + j]) : g;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < inner; ++j) {
      const A g = Load(dy[k * inner + j]);
      const A v = Load(y[k * inner + j]);
      const A s = sum[static_cast<size_t>(j)];
      dx[k * inner + j] =
          Store<T>(kOp == SoftmaxOp::kSoftmaxGrad ? v * (g - s) : g - std::exp(v) * s);
    }
  }
}

template <SoftmaxOp kOp>
struct CpuSoftmax {
  template <typename T>
  class Kernel final : public SoftmaxKernelBase {
   public:
    using SoftmaxKernelBase::SoftmaxKernelBase;
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernelWithAttrs<Kernel>(info);
    }

   protected:
    Status ComputeImpl(const KernelContext& ctx) const override {
      constexpr bool kGrad = kOp == SoftmaxOp::kSoftmaxGrad || kOp == SoftmaxOp::kLogSoftmaxGrad;
      // The gradients' input 1 (Y) has the shape of input 0 (dY).
      ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(*ctx.inputs[0]));
      const int64_t block = l.n * l.inner;
      T* out = ctx.outputs[0]->data_as<T>();
      std::vector<ArithType<T>> max, sum;
      for (int64_t o = 0; o < l.outer; ++o) {
        if constexpr (kGrad) {
          SoftmaxGradBlock<kOp>(ctx.inputs[0]->data_as<const T>() + o * block,
                                ctx.inputs[1]->data_as<const T>() + o * block, out + o * block, l.n,
                                l.inner, sum);
        } else if (l.inner == 1) {
          SoftmaxRow<kOp>(ctx.inputs[0]->data_as<const T>() + o * block, out + o * block, l.n);
        } else {
          SoftmaxBlock<kOp>(ctx.inputs[0]->data_as<const T>() + o * block, out + o * block, l.n,
                            l.inner, max, sum);
        }
      }
      return Status::Ok();
    }
  };
};

template <SoftmaxOp kOp>
Status Register(KernelRegistry& registry, std::string_view domain, std::string_view name) {
  return registry.Register({std::string(domain),
                            std::string(name),
                            DeviceType::kCpu,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            TypedFactory<CpuSoftmax<kOp>::template Kernel, FloatDtypes>::Create});
}

}  // namespace

Status RegisterCpuSoftmaxKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(Register<SoftmaxOp::kSoftmax>(registry, "", "Softmax"));
  ZG_RETURN_IF_ERROR(Register<SoftmaxOp::kLogSoftmax>(registry, "", "LogSoftmax"));
  ZG_RETURN_IF_ERROR(
      Register<SoftmaxOp::kSoftmaxGrad>(registry, "com.microsoft", "SoftmaxGrad_13"));
  return Register<SoftmaxOp::kLogSoftmaxGrad>(registry, "com.microsoft", "LogSoftmaxGrad_13");
}

}  // namespace zerograph::runtime
