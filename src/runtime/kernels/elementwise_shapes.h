#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_SHAPES_H_

// Shape inference of the element-wise ops, shared by every device: a backend derives its kernel
// from these bases and implements only ComputeImpl.

#include <utility>
#include <vector>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// Two inputs of one dtype, broadcast (numpy) or, with `same_shape_only`, of equal shapes; the
// output has their dtype, or bool with `bool_output` (Greater). It may take the memory of an input
// of its own shape and dtype.
class BinaryKernelBase : public OpKernel {
 public:
  BinaryKernelBase(const KernelInfo& info, bool bool_output, bool same_shape_only)
      : OpKernel(info), bool_output_(bool_output), same_shape_only_(same_shape_only) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 2, "expects 2 inputs, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* a, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(const TensorSpec* b, RequiredInput(ctx, 1));
    ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes: ", DataTypeName(a->dtype),
                     " and ", DataTypeName(b->dtype));
    Shape shape;
    if (same_shape_only_) {
      ZG_RETURN_IF_NOT(a->shape == b->shape,
                       "inputs of different shapes: ", ShapeToString(a->shape), " and ",
                       ShapeToString(b->shape));
      shape = a->shape;
    } else {
      ZG_ASSIGN_OR_RETURN(shape, BroadcastShapes(a->shape, b->shape));
    }
    OutputInfo out;
    out.spec.dtype = bool_output_ ? DataType::kBool : a->dtype;
    out.spec.shape = shape;
    if (!bool_output_) {
      if (a->shape == shape) {
        out.in_place_input = 0;
      } else if (b->shape == shape) {
        out.in_place_input = 1;
      }
    }
    return std::vector<OutputInfo>{std::move(out)};
  }

 private:
  bool bool_output_;
  bool same_shape_only_;
};

// One input; the output has its dtype and shape and may take its memory.
class UnaryKernelBase : public OpKernel {
 public:
  explicit UnaryKernelBase(const KernelInfo& info) : OpKernel(info) {}

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1, "expects 1 input, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    return std::vector<OutputInfo>{OutputInfo{*x, std::nullopt, /*in_place_input=*/0}};
  }
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_SHAPES_H_
