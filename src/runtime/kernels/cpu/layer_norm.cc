// LayerNormalization (ONNX 17) and SimplifiedLayerNormalization (ONNX Runtime's RMS norm) with
// their gradients LayerNormalizationGrad and SimplifiedLayerNormalizationGrad (com.microsoft),
// over rows of n elements (every dimension from `axis` on). A row's statistics come from one pass
// of sums in double; the statistics outputs (Mean, InvStdDev, inv_std_var) are fp32, as the
// contracts say. Parameter gradients sum over the rows in double.

#include <cmath>
#include <memory>
#include <vector>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/layer_norm_shapes.h"

namespace zerograph::runtime {
namespace {

// Output `i` when the node has it.
DeviceTensor* OptionalOutput(const KernelContext& ctx, size_t i) {
  return i < ctx.outputs.size() ? ctx.outputs[i] : nullptr;
}

// A parameter's values per normalized position (expanded when it broadcasts), in double. The
// contract made its dtype X's.
template <typename T>
std::vector<double> ExpandParam(const DeviceTensor* param, const std::vector<int64_t>& index,
                                int64_t n, double absent) {
  std::vector<double> out(static_cast<size_t>(n), absent);
  if (param == nullptr) return out;
  const T* p = param->data_as<const T>();
  for (int64_t j = 0; j < n; ++j) {
    out[static_cast<size_t>(j)] =
        static_cast<double>(Load(p[index.empty() ? j : index[static_cast<size_t>(j)]]));
  }
  return out;
}

// Y = (x - mean) · inv_std · scale + bias, or with kRms: Y = x · inv_rms · scale.
template <bool kRms>
struct CpuNormalization {
  template <typename T>
  class Kernel final : public NormalizationKernelBase {
   public:
    using NormalizationKernelBase::NormalizationKernelBase;
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernelWithAttrs<Kernel>(info);
    }

   protected:
    Status ComputeImpl(const KernelContext& ctx) const override {
      const DeviceTensor& x = *ctx.inputs[0];
      ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(x));
      ZG_ASSIGN_OR_RETURN(std::vector<int64_t> scale_index, ParamIndex(x, *ctx.inputs[1]));
      const std::vector<double> scale = ExpandParam<T>(ctx.inputs[1], scale_index, l.n, 1.0);
      const DeviceTensor* bias_input = !kRms && ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
      std::vector<int64_t> bias_index;
      if (bias_input != nullptr) {
        ZG_ASSIGN_OR_RETURN(bias_index, ParamIndex(x, *bias_input));
      }
      const std::vector<double> bias = ExpandParam<T>(bias_input, bias_index, l.n, 0.0);
      DeviceTensor* mean_out = kRms ? nullptr : OptionalOutput(ctx, 1);
      DeviceTensor* inv_out = OptionalOutput(ctx, kRms ? 1 : 2);
      const T* px = x.data_as<const T>();
      T* py = ctx.outputs[0]->data_as<T>();
      const double count = static_cast<double>(l.n);
      for (int64_t r = 0; r < l.outer; ++r) {
        const T* row = px + r * l.n;
        double sum = 0, sum_sq = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          const double v = static_cast<double>(Load(row[j]));
          sum += v;
          sum_sq += v * v;
        }
        const double mean = kRms ? 0.0 : sum / count;
        const double variance = std::max(0.0, sum_sq / count - mean * mean);
        const double inv = 1.0 / std::sqrt(variance + static_cast<double>(attrs_.epsilon));
        T* out = py + r * l.n;
        for (int64_t j = 0; j < l.n; ++j) {
          const double v = (static_cast<double>(Load(row[j])) - mean) * inv;
          out[j] = Store<T>(static_cast<ArithType<T>>(v * scale[static_cast<size_t>(j)] +
                                                      bias[static_cast<size_t>(j)]));
        }
        if (mean_out != nullptr) mean_out->data_as<float>()[r] = static_cast<float>(mean);
        if (inv_out != nullptr) inv_out->data_as<float>()[r] = static_cast<float>(inv);
      }
      return Status::Ok();
    }
  };
};

// Inputs dY, X, scale, then mean (not with kRms) and the inverse deviation; outputs dX,
// dscale, and dbias (not with kRms). With x̂ = (x - mean) · inv and g = dY · scale:
//   dX = inv · (g - mean_row(g) - x̂ · mean_row(g · x̂))   (kRms: no mean_row(g) term)
//   dscale = Σ_rows dY · x̂,   dbias = Σ_rows dY
template <bool kRms>
struct CpuNormalizationGrad {
  template <typename T>
  class Kernel final : public NormalizationKernelBase {
   public:
    using NormalizationKernelBase::NormalizationKernelBase;
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernelWithAttrs<Kernel>(info);
    }

   protected:
    Status ComputeImpl(const KernelContext& ctx) const override {
      const DeviceTensor& x = *ctx.inputs[1];
      const DeviceTensor& scale_input = *ctx.inputs[2];
      ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(x));
      ZG_ASSIGN_OR_RETURN(std::vector<int64_t> scale_index, ParamIndex(x, scale_input));
      const std::vector<double> scale = ExpandParam<T>(&scale_input, scale_index, l.n, 1.0);
      const float* mean = kRms ? nullptr : ctx.inputs[3]->data_as<const float>();
      const float* inv_std = ctx.inputs[kRms ? 3 : 4]->data_as<const float>();
      const T* pdy = ctx.inputs[0]->data_as<const T>();
      const T* px = x.data_as<const T>();
      T* pdx = ctx.outputs[0]->data_as<T>();
      std::vector<double> dscale(static_cast<size_t>(l.n), 0.0), dbias(dscale);
      std::vector<double> xhat(static_cast<size_t>(l.n)), g(xhat);
      const double count = static_cast<double>(l.n);
      for (int64_t r = 0; r < l.outer; ++r) {
        const T* dy = pdy + r * l.n;
        const T* row = px + r * l.n;
        const double mu = kRms ? 0.0 : static_cast<double>(mean[r]);
        const double inv = static_cast<double>(inv_std[r]);
        double sum_g = 0, sum_gx = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          const size_t i = static_cast<size_t>(j);
          const double d = static_cast<double>(Load(dy[j]));
          xhat[i] = (static_cast<double>(Load(row[j])) - mu) * inv;
          g[i] = d * scale[i];
          sum_g += g[i];
          sum_gx += g[i] * xhat[i];
          dscale[i] += d * xhat[i];
          dbias[i] += d;
        }
        const double mean_g = kRms ? 0.0 : sum_g / count;
        const double mean_gx = sum_gx / count;
        T* dx = pdx + r * l.n;
        for (int64_t j = 0; j < l.n; ++j) {
          const size_t i = static_cast<size_t>(j);
          dx[j] = Store<T>(static_cast<ArithType<T>>(inv * (g[i] - mean_g - xhat[i] * mean_gx)));
        }
      }
      StoreParamGrad(dscale, scale_index, *ctx.outputs[1]);
      if (!kRms) StoreParamGrad(dbias, scale_index, *ctx.outputs[2]);
      return Status::Ok();
    }

   private:
    // Sums the per-position gradient into the parameter's elements it broadcast from.
    static void StoreParamGrad(const std::vector<double>& per_position,
                               const std::vector<int64_t>& index, DeviceTensor& out) {
      std::vector<double> sums(static_cast<size_t>(out.numel()), 0.0);
      for (size_t j = 0; j < per_position.size(); ++j) {
        sums[index.empty() ? j : static_cast<size_t>(index[j])] += per_position[j];
      }
      T* p = out.data_as<T>();
      for (size_t i = 0; i < sums.size(); ++i) p[i] = Store<T>(static_cast<ArithType<T>>(sums[i]));
    }
  };
};

// The gradients' kernels are selected by dY's dtype (input 0), as the forwards' by X's.
template <template <typename> class Kernel>
Status Register(KernelRegistry& registry, std::string_view domain, std::string_view name) {
  return registry.Register({std::string(domain),
                            std::string(name),
                            DeviceType::kCpu,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            TypedFactory<Kernel, FloatDtypes>::Create});
}

template <typename T>
using LayerNormKernel = CpuNormalization<false>::Kernel<T>;
template <typename T>
using RmsNormKernel = CpuNormalization<true>::Kernel<T>;
template <typename T>
using LayerNormGradKernel = CpuNormalizationGrad<false>::Kernel<T>;
template <typename T>
using RmsNormGradKernel = CpuNormalizationGrad<true>::Kernel<T>;

}  // namespace

Status RegisterCpuLayerNormKernels(KernelRegistry& registry) {
  constexpr std::string_view kMicrosoft = "com.microsoft";
  ZG_RETURN_IF_ERROR(Register<LayerNormKernel>(registry, "", "LayerNormalization"));
  ZG_RETURN_IF_ERROR(Register<RmsNormKernel>(registry, kMicrosoft, "SimplifiedLayerNormalization"));
  ZG_RETURN_IF_ERROR(Register<LayerNormGradKernel>(registry, kMicrosoft, "LayerNormalizationGrad"));
  return Register<RmsNormGradKernel>(registry, kMicrosoft, "SimplifiedLayerNormalizationGrad");
}

}  // namespace zerograph::runtime
