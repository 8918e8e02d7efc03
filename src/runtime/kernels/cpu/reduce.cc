// ONNX's reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp) and ONNX Runtime's ReduceSumTraining, with
// ONNX semantics across opsets: axes from the `axes` attribute or the second input (read on the
// host at planning time), `keepdims` (default 1), and `noop_with_empty_axes` (default 0: no axes
// reduces everything; 1: no axes is the identity). Floats accumulate in double, so results do not
// depend on the order the elements are visited in; what each op accumulates is reduce_ops.h.

#include <array>
#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/reduce_ops.h"
#include "runtime/kernels/reduce_shapes.h"

namespace zerograph::runtime {
namespace {

template <ReduceOp kOp>
struct CpuReduce {
  template <typename T>
  class Kernel final : public ReduceKernelBase {
   public:
    using ReduceKernelBase::ReduceKernelBase;
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernelWithAttrs<Kernel>(info);
    }

   protected:
    Status ComputeImpl(const KernelContext& ctx) const override {
      const DeviceTensor& x = *ctx.inputs[0];
      DeviceTensor& y = *ctx.outputs[0];
      ZG_ASSIGN_OR_RETURN(const std::vector<bool> reduced, ReducedAxesOf(ctx));
      if (NoneReduced(reduced)) {
        CopyUnlessSame(x, y);
        return Status::Ok();
      }
      // The output with reduced axes kept as 1, broadcast over the input: each run of the input
      // adds into the output with stride 0 (reduced axis innermost) or 1.
      const Shape kept = KeptShape(x, reduced);
      using Acc = ReduceAcc<kOp, ArithType<T>>;
      using R = Reducer<kOp, Acc>;
      std::vector<ReduceState<Acc>> acc(static_cast<size_t>(y.numel()), R::Init());
      const T* px = x.data_as<const T>();
      const std::array<std::span<const int64_t>, 1> inputs = {kept};
      const BroadcastPlan plan = PlanBroadcast(x.shape(), inputs);
      const int64_t stride = plan.strides[0].back();
      int64_t in_offset = 0;
      ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
        const T* src = px + in_offset;
        ReduceState<Acc>* dst = acc.data() + offsets[0];
        if (stride == 0) {
          ReduceState<Acc> s = *dst;
          for (int64_t i = 0; i < n; ++i) R::Add(s, static_cast<Acc>(Load(src[i])));
          *dst = s;
        } else {
          for (int64_t i = 0; i < n; ++i) R::Add(dst[i], static_cast<Acc>(Load(src[i])));
        }
        in_offset += n;
      });
      T* py = y.data_as<T>();
      const int64_t count = y.numel() == 0 ? 0 : x.numel() / y.numel();
      for (size_t i = 0; i < acc.size(); ++i) {
        py[i] = Store<T>(static_cast<ArithType<T>>(R::Finish(acc[i], count)));
      }
      return Status::Ok();
    }
  };
};

using Factory = StatusOr<std::unique_ptr<OpKernel>> (*)(const KernelInfo&);
struct ReductionOp {
  std::string_view domain;
  std::string_view name;
  Factory factory;
};

template <ReduceOp kOp>
constexpr Factory kFactory = TypedFactory<CpuReduce<kOp>::template Kernel, NumericDtypes>::Create;

const ReductionOp kReductions[] = {
    {"", "ReduceSum", kFactory<ReduceOp::kSum>},
    {"", "ReduceMean", kFactory<ReduceOp::kMean>},
    {"", "ReduceMax", kFactory<ReduceOp::kMax>},
    {"", "ReduceMin", kFactory<ReduceOp::kMin>},
    {"", "ReduceProd", kFactory<ReduceOp::kProd>},
    {"", "ReduceSumSquare", kFactory<ReduceOp::kSumSquare>},
    {"", "ReduceL1", kFactory<ReduceOp::kL1>},
    {"", "ReduceL2", kFactory<ReduceOp::kL2>},
    {"", "ReduceLogSum", kFactory<ReduceOp::kLogSum>},
    {"", "ReduceLogSumExp", kFactory<ReduceOp::kLogSumExp>},
    {"com.microsoft", "ReduceSumTraining", kFactory<ReduceOp::kSum>},
};

}  // namespace

Status RegisterCpuReduceKernels(KernelRegistry& registry) {
  for (const ReductionOp& op : kReductions) {
    ZG_RETURN_IF_ERROR(registry.Register({std::string(op.domain),
                                          std::string(op.name),
                                          DeviceType::kCpu,
                                          NumericDtypes::Vector(),
                                          0,
                                          {},
                                          op.factory}));
  }
  return Status::Ok();
}

}  // namespace zerograph::runtime
