#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_SHAPES_H_

// The memory sharing of the element-wise ops, shared by every device (their shapes are the op
// contracts'): a backend derives its kernel from these bases and implements only ComputeImpl.

#include <span>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

// Two inputs broadcast to one output, which may take the memory of an input of its own shape and
// dtype (not a comparison's bool output).
class BinaryKernelBase : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    OutputInfo& out = outputs[0];
    for (int i : {0, 1}) {
      if (*ctx.input(static_cast<size_t>(i)) == out.spec) {
        out.in_place_input = i;
        break;
      }
    }
    return Status::Ok();
  }
};

// One input; the output has its dtype and shape and may take its memory.
class UnaryKernelBase : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }
};

// Max, Min, Sum, Mean: the output may take the memory of input 0 or 1, which only their first
// step reads, unless the same value is also a later input.
class VariadicKernelBase : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    OutputInfo& out = outputs[0];
    const Node& node = *ctx.node;
    for (size_t i = 0; i < 2 && i < ctx.num_inputs(); ++i) {
      bool read_later = false;
      for (size_t k = 2; k < node.num_inputs(); ++k) read_later |= node.input(k) == node.input(i);
      if (!read_later && *ctx.input(i) == out.spec) {
        out.in_place_input = static_cast<int>(i);
        break;
      }
    }
    return Status::Ok();
  }
};

// Where(condition, X, Y): the output may take the memory of X or Y.
class WhereKernelBase : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    OutputInfo& out = outputs[0];
    for (int i : {1, 2}) {
      if (*ctx.input(static_cast<size_t>(i)) == out.spec) {
        out.in_place_input = i;
        break;
      }
    }
    return Status::Ok();
  }
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_ELEMENTWISE_SHAPES_H_
