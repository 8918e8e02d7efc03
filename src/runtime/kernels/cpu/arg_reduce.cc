// ArgMax and ArgMin: the index of the extreme along one axis, the first of ties or, with
// select_last_index, the last. The inner loop runs over the contiguous dimensions after the axis.

#include <memory>
#include <vector>

#include "runtime/kernels/arg_reduce_shapes.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

template <bool kMax>
struct CpuArgReduce {
  template <typename T>
  class Kernel final : public ArgReduceKernelBase {
   public:
    using ArgReduceKernelBase::ArgReduceKernelBase;
    static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
      return MakeKernelWithAttrs<Kernel>(info);
    }

   protected:
    Status ComputeImpl(const KernelContext& ctx) const override {
      const DeviceTensor& x = *ctx.inputs[0];
      ZG_ASSIGN_OR_RETURN(const AxisLayout l, Layout(x));
      if (l.n == 0)
        return ctx.outputs[0]->numel() == 0 ? Status::Ok() : InvalidArgumentError("empty axis");
      const T* px = x.data_as<const T>();
      int64_t* py = ctx.outputs[0]->data_as<int64_t>();
      std::vector<ArithType<T>> best(static_cast<size_t>(l.inner));
      for (int64_t o = 0; o < l.outer; ++o) {
        const T* row = px + o * l.n * l.inner;
        int64_t* index = py + o * l.inner;
        for (int64_t j = 0; j < l.inner; ++j) {
          best[static_cast<size_t>(j)] = Load(row[j]);
          index[j] = 0;
        }
        for (int64_t k = 1; k < l.n; ++k) {
          const T* slice = row + k * l.inner;
          for (int64_t j = 0; j < l.inner; ++j) {
            const ArithType<T> v = Load(slice[j]);
            ArithType<T>& b = best[static_cast<size_t>(j)];
            if (Better(v, b)) {
              b = v;
              index[j] = k;
            }
          }
        }
      }
      return Status::Ok();
    }

   private:
    bool Better(ArithType<T> v, ArithType<T> best) const {
      if (attrs_.select_last_index) return kMax ? v >= best : v <= best;
      return kMax ? v > best : v < best;
    }
  };
};

}  // namespace

Status RegisterCpuArgReduceKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(registry.Register(
      {"",
       "ArgMax",
       DeviceType::kCpu,
       NumericDtypes::Vector(),
       0,
       {},
       TypedFactory<CpuArgReduce<true>::template Kernel, NumericDtypes>::Create}));
  return registry.Register(
      {"",
       "ArgMin",
       DeviceType::kCpu,
       NumericDtypes::Vector(),
       0,
       {},
       TypedFactory<CpuArgReduce<false>::template Kernel, NumericDtypes>::Create});
}

}  // namespace zerograph::runtime
