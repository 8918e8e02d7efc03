#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_MICROSOFT_GRAD_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_MICROSOFT_GRAD_SHAPES_H_

// What the CPU and CUDA kernels of ONNX Runtime's BiasGeluGrad_dX, DivGrad and Scale share: their
// attributes and memory sharing (their shapes are the op contracts').

#include <span>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// BiasGeluGrad_dX(dY, X, B): dX may take dY's or X's memory.
class BiasGeluGradKernelBase : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }
};

// Scale(input, scale): output = input·scale, or input/scale with scale_down; the output may take
// the input's memory.
class ScaleKernelBase : public OpKernel {
 public:
  ScaleKernelBase(const KernelInfo& info, bool scale_down)
      : OpKernel(info), scale_down_(scale_down) {}

  static StatusOr<bool> ParseAttrs(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t scale_down, ContractInt(*info.node, "scale_down"));
    return scale_down != 0;
  }

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }

  // The factor the input is multiplied by: the scalar input (on the host), or its inverse.
  StatusOr<double> Factor(const DeviceTensor& scale) const {
    ZG_RETURN_IF_NOT(scale.numel() == 1, "scale ", ShapeToString(scale.shape()),
                     " is not a single value");
    using ScaleDtypes =
        DtypeList<DataType::kFloat32, DataType::kFloat64, DataType::kInt64, DataType::kInt32>;
    ZG_ASSIGN_OR_RETURN(
        const double value,
        DispatchDtypes(ScaleDtypes{}, scale.dtype(), [&](auto tag) -> StatusOr<double> {
          return static_cast<double>(scale.data_as<const decltype(tag)>()[0]);
        }));
    ZG_RETURN_IF_NOT(value != 0, "scale is 0");
    return scale_down_ ? 1 / value : value;
  }

 private:
  bool scale_down_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_MICROSOFT_GRAD_SHAPES_H_
