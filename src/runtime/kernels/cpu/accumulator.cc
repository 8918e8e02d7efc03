// ONNX Runtime's InPlaceAccumulatorV2 on the CPU: buffer = overwrite ? value : buffer + value, in
// the buffer's dtype (the value may have another), and the flag output true. With the buffer
// output the executor may give it the buffer's memory; without it the op updates its buffer input
// in place, which is ONNX Runtime's meaning of the op (its training graphs bind no output).

#include <memory>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

template <typename T>
class AccumulatorKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<AccumulatorKernel>(info);
  }

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    if (outputs.size() > 1) outputs[1].in_place_input = 0;
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& buffer = *ctx.inputs[0];
    const DeviceTensor& value = *ctx.inputs[1];
    bool overwrite = false;
    if (ctx.inputs.size() > 2 && ctx.inputs[2] != nullptr) {
      const DeviceTensor& flag = *ctx.inputs[2];
      ZG_RETURN_IF_NOT(flag.numel() == 1, "overwrite_flag must be one bool, got ", flag.ToString());
      overwrite = *flag.data_as<const bool>();
    }
    const DeviceTensor& out =
        ctx.outputs.size() > 1 && ctx.outputs[1] != nullptr ? *ctx.outputs[1] : buffer;
    ZG_RETURN_IF_ERROR(DispatchDtypes(FloatDtypes{}, value.dtype(), [&](auto tag) {
      using V = decltype(tag);
      const T* pb = buffer.data_as<const T>();
      const V* pv = value.data_as<const V>();
      T* po = out.data_as<T>();
      for (int64_t i = 0; i < buffer.numel(); ++i) {
        const auto v = static_cast<ArithType<T>>(Load(pv[i]));
        po[i] = Store<T>(overwrite ? v : Load(pb[i]) + v);
      }
      return Status::Ok();
    }));
    *ctx.outputs[0]->data_as<bool>() = true;
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuAccumulatorKernels(KernelRegistry& registry) {
  return registry.Register({"com.microsoft",
                            "InPlaceAccumulatorV2",
                            DeviceType::kCpu,
                            FloatDtypes::Vector(),
                            0,
                            {},
                            TypedFactory<AccumulatorKernel, FloatDtypes>::Create});
}

}  // namespace zerograph::runtime
