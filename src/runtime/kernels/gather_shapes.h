#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_GATHER_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_GATHER_SHAPES_H_

// The indexed ops, shared by every device: Gather, GatherElements, ScatterElements, Trilu and ONNX
// Runtime's GatherGrad. The bases parse the attributes; a backend implements ComputeImpl. An index
// outside [-dim, dim) is an InvalidArgument error at run time, naming the node (OpKernel adds it).

#include <string>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/data_movement_shapes.h"

namespace zerograph::runtime {

// Gather, GatherElements, GatherGrad: an `axis`.
class AxisKernelBase : public OpKernel {
 public:
  static StatusOr<int64_t> ParseAttrs(const KernelInfo& info) {
    return ContractInt(*info.node, "axis");
  }
  AxisKernelBase(const KernelInfo& info, int64_t axis) : OpKernel(info), axis_(axis) {}

 protected:
  // The axis of a rank-`rank` tensor, non-negative.
  StatusOr<size_t> Axis(int64_t rank) const {
    ZG_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, rank));
    return static_cast<size_t>(axis);
  }

 private:
  int64_t axis_;
};

// ScatterElements' combination of an update with the element it lands on.
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

class ScatterElementsKernelBase : public AxisKernelBase {
 public:
  struct Attrs {
    int64_t axis = 0;
    ScatterReduction reduction = ScatterReduction::kNone;
  };
  static StatusOr<Attrs> ParseAttrs(const KernelInfo& info) {
    Attrs attrs;
    ZG_ASSIGN_OR_RETURN(attrs.axis, ContractInt(*info.node, "axis"));
    if (info.node->HasAttribute("reduction")) {
      ZG_ASSIGN_OR_RETURN(const std::string name, ContractString(*info.node, "reduction"));
      constexpr std::pair<std::string_view, ScatterReduction> kNames[] = {
          {"none", ScatterReduction::kNone},
          {"add", ScatterReduction::kAdd},
          {"mul", ScatterReduction::kMul},
          {"max", ScatterReduction::kMax},
          {"min", ScatterReduction::kMin}};
      bool known = false;
      for (const auto& [text, value] : kNames) {
        if (name == text) {
          attrs.reduction = value;
          known = true;
        }
      }
      ZG_RETURN_IF_NOT(known, "unknown reduction '", name, "'");
    }
    return attrs;
  }
  ScatterElementsKernelBase(const KernelInfo& info, Attrs attrs)
      : AxisKernelBase(info, attrs.axis), reduction_(attrs.reduction) {}

 protected:
  // The output starts as a copy of the data: it may take the data's memory.
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }

  const ScatterReduction reduction_;
};

// Trilu: `upper` and the host input k (0 when omitted).
class TriluKernelBase : public OpKernel {
 public:
  static StatusOr<bool> ParseAttrs(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(const int64_t upper, ContractInt(*info.node, "upper"));
    return upper != 0;
  }
  TriluKernelBase(const KernelInfo& info, bool upper) : OpKernel(info), upper_(upper) {}

 protected:
  StatusOr<int64_t> K(const KernelContext& ctx) const {
    if (ctx.inputs.size() < 2 || ctx.inputs[1] == nullptr) return int64_t{0};
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> k, ReadInts(ctx.inputs[1]->host_value(), "k"));
    ZG_RETURN_IF_NOT(k.size() == 1, "k has ", k.size(), " values, not one");
    return k[0];
  }
  const bool upper_;
};

// An index into a dimension of `dim`, negative counting from the back, checked.
inline StatusOr<int64_t> CheckedIndex(int64_t index, int64_t dim) {
  const int64_t i = index < 0 ? index + dim : index;
  ZG_RETURN_IF_NOT(i >= 0 && i < dim, "index ", index, " is out of range for a dimension of ", dim);
  return i;
}

// Every fixed-size dtype but bfloat16: the deprecated Scatter (opset 9), which ScatterElements
// replaced before bfloat16 came to ONNX.
inline std::vector<DataType> AllButBFloat16() {
  std::vector<DataType> dtypes = AllDtypes::Vector();
  std::erase(dtypes, DataType::kBFloat16);
  return dtypes;
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_GATHER_SHAPES_H_
