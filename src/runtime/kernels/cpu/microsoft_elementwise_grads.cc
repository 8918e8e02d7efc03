// ONNX Runtime's element-wise training ops that do not fit the binary table on the CPU:
// BiasGeluGrad_dX, DivGrad (its gradients summed back over the broadcast axes) and Scale.

#include <array>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/microsoft_grad_shapes.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

// dX = dY · Gelu'(X + B), B along X's last dimension.
template <typename T>
class BiasGeluGradKernel final : public BiasGeluGradKernelBase {
 public:
  using BiasGeluGradKernelBase::BiasGeluGradKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<BiasGeluGradKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const T* dy = ctx.inputs[0]->data_as<const T>();
    const T* x = ctx.inputs[1]->data_as<const T>();
    const T* b = ctx.inputs[2]->data_as<const T>();
    T* dx = ctx.outputs[0]->data_as<T>();
    const int64_t width = ctx.inputs[2]->numel();
    const int64_t rows = width == 0 ? 0 : ctx.outputs[0]->numel() / width;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * width;
      for (int64_t j = 0; j < width; ++j) {
        const auto v = Load(x[base + j]) + Load(b[j]);
        dx[base + j] = Store<T>(Load(dy[base + j]) * elementwise::GeluMath::ExactDerivative(v));
      }
    }
    return Status::Ok();
  }
};

// dA = Σ dY/B and dB = Σ -dY·A/B² over the axes A and B were broadcast along. Sums run in fp32
// (fp64 for double) in scratch of each input's size; an omitted output is skipped.
template <typename T>
class DivGradKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<DivGradKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const DeviceTensor& dy = *ctx.inputs[0];
    const DeviceTensor& a = *ctx.inputs[1];
    const DeviceTensor& b = *ctx.inputs[2];
    DeviceTensor* da = ctx.outputs[0];
    DeviceTensor* db = ctx.outputs.size() > 1 ? ctx.outputs[1] : nullptr;
    std::vector<Acc> sum_a(da != nullptr ? static_cast<size_t>(a.numel()) : 0);
    std::vector<Acc> sum_b(db != nullptr ? static_cast<size_t>(b.numel()) : 0);
    const T* pdy = dy.data_as<const T>();
    const T* pa = a.data_as<const T>();
    const T* pb = b.data_as<const T>();
    const std::array<std::span<const int64_t>, 2> inputs = {a.shape(), b.shape()};
    const BroadcastPlan plan = PlanBroadcast(dy.shape(), inputs);
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    int64_t dy_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t ia = offsets[0] + i * sa;
        const int64_t ib = offsets[1] + i * sb;
        const Acc quotient =
            static_cast<Acc>(Load(pdy[dy_offset + i])) / static_cast<Acc>(Load(pb[ib]));
        if (da != nullptr) sum_a[static_cast<size_t>(ia)] += quotient;
        if (db != nullptr) {
          sum_b[static_cast<size_t>(ib)] -=
              quotient * static_cast<Acc>(Load(pa[ia])) / static_cast<Acc>(Load(pb[ib]));
        }
      }
      dy_offset += n;
    });
    if (da != nullptr) Write(sum_a, da->data_as<T>());
    if (db != nullptr) Write(sum_b, db->data_as<T>());
    return Status::Ok();
  }

 private:
  template <typename Acc>
  static void Write(const std::vector<Acc>& sums, T* out) {
    for (size_t i = 0; i < sums.size(); ++i) out[i] = Store<T>(static_cast<ArithType<T>>(sums[i]));
  }
};

template <typename T>
class ScaleKernel final : public ScaleKernelBase {
 public:
  using ScaleKernelBase::ScaleKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernelWithAttrs<ScaleKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_ASSIGN_OR_RETURN(const double factor, Factor(*ctx.inputs[1]));
    const auto f = static_cast<ArithType<T>>(factor);
    const T* x = ctx.inputs[0]->data_as<const T>();
    T* y = ctx.outputs[0]->data_as<T>();
    const int64_t n = ctx.outputs[0]->numel();
    for (int64_t i = 0; i < n; ++i) y[i] = Store<T>(Load(x[i]) * f);
    return Status::Ok();
  }
};

template <template <typename> class Kernel, DataType... Ds>
Status Register(KernelRegistry& registry, std::string op, DtypeList<Ds...>,
                std::vector<int> host_inputs = {}) {
  return registry.Register({std::string(kMicrosoftDomain),
                            std::move(op),
                            DeviceType::kCpu,
                            {Ds...},
                            0,
                            std::move(host_inputs),
                            MakeTypedKernel<Kernel, Ds...>});
}

}  // namespace

Status RegisterCpuMicrosoftElementwiseKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(Register<BiasGeluGradKernel>(registry, "BiasGeluGrad_dX", FloatDtypes{}));
  ZG_RETURN_IF_ERROR(Register<DivGradKernel>(registry, "DivGrad", FloatDtypes{}));
  return Register<ScaleKernel>(registry, "Scale", FloatDtypes{}, {1});
}

}  // namespace zerograph::runtime
