// org.zerograph SumOfSquares and GradientControl (docs/formats.md), mixed precision's gradient norm
// and loss scale:
//   SumOfSquares(X1..Xn) -> S = Σ x² over every element of every input (fp32, fp16 or bf16 each)
//   GradientControl(sum_squares[, scale, good_steps]) -> (control[3][, new_scale, new_good_steps])
// The sum is accumulated in double in a fixed order (kLanes interleaved partial sums, added up
// lane by lane at the end), so a run repeats bit for bit; an inf or NaN anywhere makes S
// non-finite.

#include <memory>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/gradient_control_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

// Independent partial sums: the loop vectorizes without reassociating any one of them.
constexpr int64_t kLanes = 8;

template <typename T>
void AddSquares(const T* x, int64_t n, double (&lanes)[kLanes]) {
  const int64_t whole = n - n % kLanes;
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      const double v = Load(x[i + l]);
      lanes[l] += v * v;  // exact: a float's square fits a double's mantissa
    }
  }
  for (int64_t i = whole; i < n; ++i) {
    const double v = Load(x[i]);
    lanes[i - whole] += v * v;
  }
}

class SumOfSquaresKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    double lanes[kLanes] = {};
    for (const DeviceTensor* x : ctx.inputs) {
      ZG_RETURN_IF_ERROR(DispatchDtypes(GradientDtypes{}, x->dtype(), [&](auto tag) {
        AddSquares(x->data_as<const decltype(tag)>(), x->numel(), lanes);
        return Status::Ok();
      }));
    }
    double sum = 0;
    for (const double lane : lanes) sum += lane;
    *ctx.outputs[0]->data_as<float>() = static_cast<float>(sum);
    return Status::Ok();
  }
};

class GradientControlKernel final : public GradientControlKernelBase {
 public:
  using GradientControlKernelBase::GradientControlKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    auto scalar = [&](size_t i) { return *ctx.inputs[i]->data_as<const float>(); };
    const GradientControlResult r = ComputeGradientControl(
        attrs_, scalar(0), scaled_, scaled_ ? scalar(1) : 1.0f, scaled_ ? scalar(2) : 0.0f);
    float* control = ctx.outputs[0]->data_as<float>();
    for (int i = 0; i < 3; ++i) control[i] = r.control[i];
    if (scaled_) {
      *ctx.outputs[1]->data_as<float>() = r.new_scale;
      *ctx.outputs[2]->data_as<float>() = r.new_good_steps;
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuGradientControlKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::string domain(kZerographDomain);
  // SumOfSquares dispatches on each input's dtype itself; input 0 only selects the kernel.
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "SumOfSquares",
                                        kCpu,
                                        GradientDtypes::Vector(),
                                        0,
                                        {},
                                        MakeKernel<SumOfSquaresKernel>}));
  return registry.Register({domain,
                            "GradientControl",
                            kCpu,
                            {DataType::kFloat32},
                            0,
                            {},
                            MakeKernelWithAttrs<GradientControlKernel>});
}

}  // namespace zerograph::runtime
