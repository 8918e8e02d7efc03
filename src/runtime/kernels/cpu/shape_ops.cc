// The CPU's data movement kernels (kernels/shape_ops.h): Identity, Reshape and Constant through
// HostMemory, and Transpose's strided gather.

#include <memory>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/host_memory.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/shape_ops.h"

namespace zerograph::runtime {
namespace {

// out[i] = in[i·stride] for a run of n elements of `Word` (a type of the element's size).
template <typename Word>
void GatherRun(const std::byte* in, int64_t stride, std::byte* out, int64_t n) {
  const Word* src = reinterpret_cast<const Word*>(in);
  Word* dst = reinterpret_cast<Word*>(out);
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

class TransposeKernel final : public TransposeKernelBase {
 public:
  using TransposeKernelBase::TransposeKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const BroadcastPlan plan, GatherPlan(x, y));
    const int64_t inner_stride = plan.strides[0].back();
    const size_t size = x.element_size();
    const auto* in = static_cast<const std::byte*>(x.data());
    auto* out = static_cast<std::byte*>(y.data());
    int64_t out_offset = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
      const std::byte* src = in + offsets[0] * static_cast<int64_t>(size);
      std::byte* dst = out + out_offset * static_cast<int64_t>(size);
      switch (size) {
        case 1:
          GatherRun<uint8_t>(src, inner_stride, dst, n);
          break;
        case 2:
          GatherRun<uint16_t>(src, inner_stride, dst, n);
          break;
        case 4:
          GatherRun<uint32_t>(src, inner_stride, dst, n);
          break;
        default:
          GatherRun<uint64_t>(src, inner_stride, dst, n);
          break;
      }
      out_offset += n;
    });
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuShapeKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::vector<DataType> all = AllDtypes::Vector();
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Identity", kCpu, all, 0, {}, MakeKernel<CopyInputKernel<HostMemory>>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "Reshape", kCpu, all, 0, {}, MakeKernel<CopyInputKernel<HostMemory>>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Transpose", kCpu, all, 0, {}, MakeKernelWithAttrs<TransposeKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Constant",
                                        kCpu,
                                        {DataType::kUndefined},
                                        -1,
                                        {},
                                        MakeKernelWithAttrs<ConstantKernel<HostMemory>>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
