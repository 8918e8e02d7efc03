#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_LAYER_NORM_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_LAYER_NORM_SHAPES_H_

// Attributes of the normalizations over the dimensions from `axis` on: ONNX's
// LayerNormalization, ONNX Runtime's SimplifiedLayerNormalization (RMS) and their gradients,
// shared by every device. The input is seen as [rows, n]; scale and bias broadcast over the n.

#include <vector>

#include "runtime/kernels/axis_layout.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

struct NormalizationAttrs {
  int64_t axis = -1;
  float epsilon = 1e-5f;
};

class NormalizationKernelBase : public OpKernel {
 public:
  static StatusOr<NormalizationAttrs> ParseAttrs(const KernelInfo& info) {
    NormalizationAttrs attrs;
    ZG_ASSIGN_OR_RETURN(attrs.axis, ContractInt(*info.node, "axis"));
    ZG_ASSIGN_OR_RETURN(attrs.epsilon, ContractFloat(*info.node, "epsilon"));
    return attrs;
  }
  NormalizationKernelBase(const KernelInfo& info, NormalizationAttrs attrs)
      : OpKernel(info), attrs_(attrs) {}

 protected:
  // outer: the rows, n: the normalized elements of each.
  StatusOr<AxisLayout> Layout(const DeviceTensor& x) const {
    ZG_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(attrs_.axis, x.rank()));
    return LayoutFrom(x.shape(), axis);
  }
  // For each of a row's n elements, the element of `param` (scale, bias) it takes; empty when
  // param has all n (no broadcast). The contract checked that it broadcasts.
  StatusOr<std::vector<int64_t>> ParamIndex(const DeviceTensor& x,
                                            const DeviceTensor& param) const {
    ZG_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(attrs_.axis, x.rank()));
    const Shape normalized(x.shape().begin() + axis, x.shape().end());
    if (param.numel() == NumElements(normalized)) return std::vector<int64_t>{};
    // Param's strides aligned right against the normalized shape, 0 where it broadcasts.
    const int64_t rank = static_cast<int64_t>(normalized.size());
    std::vector<int64_t> strides(normalized.size(), 0);
    int64_t stride = 1;
    for (int64_t d = param.rank() - 1, nd = rank - 1; d >= 0; --d, --nd) {
      const int64_t dim = param.shape()[static_cast<size_t>(d)];
      if (dim != 1) strides[static_cast<size_t>(nd)] = stride;
      stride *= dim;
    }
    std::vector<int64_t> index(static_cast<size_t>(NumElements(normalized)));
    for (size_t i = 0; i < index.size(); ++i) {
      int64_t rest = static_cast<int64_t>(i), offset = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        const int64_t dim = normalized[static_cast<size_t>(d)];
        offset += (rest % dim) * strides[static_cast<size_t>(d)];
        rest /= dim;
      }
      index[i] = offset;
    }
    return index;
  }

  const NormalizationAttrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_LAYER_NORM_SHAPES_H_
