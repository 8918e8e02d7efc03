#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_DATA_MOVEMENT_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_DATA_MOVEMENT_SHAPES_H_

// ONNX's data-movement ops that only move bytes, shared by every device: Shape, Size, Expand,
// Concat, Split, Slice, Tile, Range, ConstantOfShape (Squeeze, Unsqueeze and Flatten are
// CopyInputKernel). Each is a template on a mover policy (HostMover, CudaMover) that adds to the
// device's memory policy (CopyBytes, Zero):
//   Gather(src, element_size, plan, dst, ctx)    dst[i] = src[offset of i in the plan's operand 0]
//   Copy2D(dst, dpitch, src, spitch, width, height, ctx)   `height` rows of `width` bytes
//   CopyFromHostNow(src, dst, bytes, ctx)         from a host buffer the caller then frees
//   Fill(dst, element_size, pattern, n, ctx)      n copies of the element in `pattern`'s low bytes
// Index arithmetic is the IR's (zerograph/ir/data_movement_shapes.h), redone on the run's host
// values. Outputs that are a contiguous range of the input (Slice, Split) are views.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/ir/data_movement_shapes.h"
#include "zerograph/runtime/tensor_proto.h"

namespace zerograph::runtime {

// The host values of a run's host-accessible inputs, as ShapeContext::values holds them when
// planning.
class RunValues {
 public:
  explicit RunValues(const KernelContext& ctx)
      : values_(ctx.inputs.size()), pointers_(ctx.inputs.size(), nullptr) {
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const DeviceTensor* t = ctx.inputs[i];
      if (t != nullptr && t->device().host_accessible()) {
        values_[i] = t->host_value();
        pointers_[i] = &values_[i];
      }
    }
  }
  std::span<const HostValue* const> get() const { return pointers_; }

 private:
  std::vector<HostValue> values_;
  std::vector<const HostValue*> pointers_;
};

// The integers of host input `i` of `values`, or nullopt for an omitted input.
inline StatusOr<std::optional<std::vector<int64_t>>> OptionalInts(
    std::span<const HostValue* const> values, size_t i, std::string_view what) {
  if (i >= values.size() || values[i] == nullptr) return std::optional<std::vector<int64_t>>();
  ZG_ASSIGN_OR_RETURN(std::vector<int64_t> ints, ReadInts(*values[i], what));
  return std::optional<std::vector<int64_t>>(std::move(ints));
}
inline StatusOr<std::vector<int64_t>> RequiredInts(std::span<const HostValue* const> values,
                                                   size_t i, std::string_view what) {
  ZG_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ints, OptionalInts(values, i, what));
  ZG_RETURN_IF_NOT(ints.has_value(), "the ", what, " input is not known on the host");
  return std::move(*ints);
}

// A gather from one input: output element i, in row-major order over plan.dims, is input element
// offset + (i's offset in plan.strides[0]).
struct StridedSource {
  int64_t offset = 0;
  BroadcastPlan plan;

  // The output is elements [offset, offset + n) of the input: a view, or one copy.
  bool contiguous() const { return plan.dims.size() == 1 && plan.strides[0][0] == 1; }
};

// Reads `dims` of an input with `in_strides` from `offset`.
inline StridedSource MakeSource(int64_t offset, std::span<const int64_t> dims, Shape in_strides) {
  return {offset, CollapsePlan(dims, {std::move(in_strides)})};
}

// Copies `source` of `x` into `y`, unless `y` is that very view already.
template <typename M>
Status CopyStrided(const DeviceTensor& x, const StridedSource& source, void* y, int64_t n,
                   const KernelContext& ctx) {
  if (n == 0) return Status::Ok();
  const size_t size = x.element_size();
  const std::byte* src =
      static_cast<const std::byte*>(x.data()) + source.offset * static_cast<int64_t>(size);
  if (source.contiguous()) return M::CopyBytes(src, y, static_cast<size_t>(n) * size, ctx);
  return M::Gather(src, size, source.plan, y, ctx);
}

// Shape and Size: the contract's values from the input's shape.
template <typename M>
class ShapeValuesKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::optional<int64_t> start, end;
    if (info.node->HasAttribute("start")) {
      ZG_ASSIGN_OR_RETURN(start, ContractInt(*info.node, "start"));
    }
    if (info.node->HasAttribute("end")) {
      ZG_ASSIGN_OR_RETURN(end, ContractInt(*info.node, "end"));
    }
    return std::unique_ptr<OpKernel>(new ShapeValuesKernel(info, start, end));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const Shape& shape = ctx.inputs[0]->shape();
    std::vector<int64_t> values;
    if (op_type() == "Size") {
      values.push_back(NumElements(shape));
    } else {
      const int64_t rank = static_cast<int64_t>(shape.size());
      auto clamp = [rank](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
      const int64_t from = clamp(start_.value_or(0));
      const int64_t to = std::max(clamp(end_.value_or(rank)), from);
      values.assign(shape.begin() + from, shape.begin() + to);
    }
    return M::CopyFromHostNow(values.data(), ctx.outputs[0]->data(),
                              values.size() * sizeof(int64_t), ctx);
  }

 private:
  ShapeValuesKernel(const KernelInfo& info, std::optional<int64_t> start,
                    std::optional<int64_t> end)
      : OpKernel(info), start_(start), end_(end) {}
  std::optional<int64_t> start_, end_;
};

// Expand: the input broadcast to the output (stride 0 along broadcast dimensions).
template <typename M>
class ExpandKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    const std::span<const int64_t> in_shape = x.shape();
    StridedSource source{0, PlanBroadcast(y.shape(), std::span(&in_shape, 1))};
    return CopyStrided<M>(x, source, y.data(), y.numel(), ctx);
  }
};

// Tile: output [r0·d0, r1·d1, ...] read as [r0, d0, r1, d1, ...] with stride 0 along each r.
template <typename M>
class TileKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    Shape dims, strides;
    for (size_t d = 0; d < x.shape().size(); ++d) {
      dims.insert(dims.end(), {x.shape()[d] == 0 ? 0 : y.shape()[d] / x.shape()[d], x.shape()[d]});
      strides.insert(strides.end(), {0, x.strides()[d]});
    }
    if (y.numel() == 0) return Status::Ok();
    return CopyStrided<M>(x, MakeSource(0, dims, std::move(strides)), y.data(), y.numel(), ctx);
  }
};

// Slice: starts, ends, axes from attributes (opset 1) or host inputs (10 on), steps too.
template <typename M>
class SliceKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto kernel = std::unique_ptr<SliceKernel>(new SliceKernel(info));
    const Node& node = *info.node;
    if (node.num_inputs() == 1) {
      ZG_ASSIGN_OR_RETURN(kernel->starts_, ContractInts(node, "starts"));
      ZG_ASSIGN_OR_RETURN(kernel->ends_, ContractInts(node, "ends"));
      if (node.HasAttribute("axes")) {
        ZG_ASSIGN_OR_RETURN(kernel->axes_, ContractInts(node, "axes"));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    ZG_ASSIGN_OR_RETURN(const StridedSource source, Source(ctx.input(0)->shape, ctx.values));
    if (source.contiguous()) outputs[0].view = OutputInfo::View{0, source.offset};
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    RunValues values(ctx);
    ZG_ASSIGN_OR_RETURN(const StridedSource source, Source(x.shape(), values.get()));
    return CopyStrided<M>(x, source, y.data(), y.numel(), ctx);
  }

 private:
  using OpKernel::OpKernel;

  StatusOr<StridedSource> Source(std::span<const int64_t> shape,
                                 std::span<const HostValue* const> values) const {
    std::vector<int64_t> starts = starts_, ends = ends_;
    std::optional<std::vector<int64_t>> axes = axes_, steps;
    if (num_inputs() > 1) {
      ZG_ASSIGN_OR_RETURN(starts, RequiredInts(values, 1, "starts"));
      ZG_ASSIGN_OR_RETURN(ends, RequiredInts(values, 2, "ends"));
      ZG_ASSIGN_OR_RETURN(axes, OptionalInts(values, 3, "axes"));
      ZG_ASSIGN_OR_RETURN(steps, OptionalInts(values, 4, "steps"));
    }
    auto span = [](const std::optional<std::vector<int64_t>>& v) {
      return v ? std::optional<std::span<const int64_t>>(*v) : std::nullopt;
    };
    ZG_ASSIGN_OR_RETURN(SliceRanges ranges,
                        ResolveSlice(shape, starts, ends, span(axes), span(steps)));
    const Shape in_strides = ContiguousStrides(shape);
    int64_t offset = 0;
    Shape strides(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (ranges.out[d] > 0) offset += ranges.start[d] * in_strides[d];
      strides[d] = in_strides[d] * ranges.step[d];
    }
    return MakeSource(offset, ranges.out, std::move(strides));
  }

  std::vector<int64_t> starts_, ends_;
  std::optional<std::vector<int64_t>> axes_;
};

// Split: output k is the slice [begin_k, begin_k + part_k) of the axis; a view where contiguous.
template <typename M>
class SplitKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto kernel = std::unique_ptr<SplitKernel>(new SplitKernel(info));
    const Node& node = *info.node;
    ZG_ASSIGN_OR_RETURN(kernel->axis_, ContractInt(node, "axis"));
    if (node.HasAttribute("split")) {
      ZG_ASSIGN_OR_RETURN(kernel->split_, ContractInts(node, "split"));
    }
    kernel->uneven_ = node.HasAttribute("num_outputs");
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

 protected:
  Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const override {
    ZG_ASSIGN_OR_RETURN(const std::vector<StridedSource> sources,
                        Sources(ctx.input(0)->shape, ctx.values));
    for (size_t k = 0; k < sources.size(); ++k) {
      if (sources[k].contiguous()) outputs[k].view = OutputInfo::View{0, sources[k].offset};
    }
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    RunValues values(ctx);
    ZG_ASSIGN_OR_RETURN(const std::vector<StridedSource> sources, Sources(x.shape(), values.get()));
    for (size_t k = 0; k < sources.size(); ++k) {
      DeviceTensor& y = *ctx.outputs[k];
      ZG_RETURN_IF_ERROR(CopyStrided<M>(x, sources[k], y.data(), y.numel(), ctx));
    }
    return Status::Ok();
  }

 private:
  using OpKernel::OpKernel;

  StatusOr<std::vector<StridedSource>> Sources(std::span<const int64_t> shape,
                                               std::span<const HostValue* const> values) const {
    ZG_ASSIGN_OR_RETURN(const int64_t axis,
                        NormalizeAxis(axis_, static_cast<int64_t>(shape.size())));
    std::optional<std::vector<int64_t>> split = split_;
    if (num_inputs() > 1) {
      ZG_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> input,
                          OptionalInts(values, 1, "split"));
      if (input) split = std::move(input);
    }
    const AxisSplit at = SplitAtAxis(shape, static_cast<size_t>(axis));
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> parts,
                        ResolveSplit(at.dim, std::move(split), num_outputs(), uneven_));
    std::vector<StridedSource> sources;
    int64_t begin = 0;
    for (int64_t part : parts) {
      const Shape dims = {at.outer, part, at.inner};
      sources.push_back(MakeSource(begin * at.inner, dims, {at.dim * at.inner, at.inner, 1}));
      begin += part;
    }
    return sources;
  }

  int64_t axis_ = 0;
  std::optional<std::vector<int64_t>> split_;
  bool uneven_ = false;
};

// Concat: input k fills columns [begin_k, begin_k + len_k) of the [outer, axis·inner] output,
// one 2-D copy per input.
template <typename M>
class ConcatKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(const int64_t axis, ContractInt(*info.node, "axis"));
    return std::unique_ptr<OpKernel>(new ConcatKernel(info, axis));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, y.rank()));
    const AxisSplit out = SplitAtAxis(y.shape(), static_cast<size_t>(axis));
    const size_t size = y.element_size();
    const size_t row = static_cast<size_t>(out.dim * out.inner) * size;
    size_t column = 0;
    for (const DeviceTensor* x : ctx.inputs) {
      const size_t width = static_cast<size_t>(x->dim(axis) * out.inner) * size;
      if (width > 0 && out.outer > 0) {
        ZG_RETURN_IF_ERROR(M::Copy2D(static_cast<std::byte*>(y.data()) + column, row, x->data(),
                                     width, width, static_cast<size_t>(out.outer), ctx));
      }
      column += width;
    }
    return Status::Ok();
  }

 private:
  ConcatKernel(const KernelInfo& info, int64_t axis) : OpKernel(info), axis_(axis) {}
  int64_t axis_;
};

// Range: start + i·delta, computed in the output's type on the host (outputs are small).
template <typename M>
class RangeKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    DeviceTensor& y = *ctx.outputs[0];
    return DispatchDtype<DataType::kFloat32, DataType::kFloat64, DataType::kInt32,
                         DataType::kInt64>(y.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T start = *ctx.inputs[0]->data_as<const T>();
      const T delta = *ctx.inputs[2]->data_as<const T>();
      std::vector<T> values(static_cast<size_t>(y.numel()));
      for (size_t i = 0; i < values.size(); ++i) values[i] = start + static_cast<T>(i) * delta;
      return M::CopyFromHostNow(values.data(), y.data(), y.byte_size(), ctx);
    });
  }
};

// ConstantOfShape: every element the `value` attribute's one element (fp32 0 by default).
template <typename M>
class ConstantOfShapeKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    uint64_t pattern = 0;
    if (const onnx::AttributeProto* value = info.node->FindAttribute("value")) {
      ZG_ASSIGN_OR_RETURN(HostTensorData data, ReadTensorProto(value->t()));
      ZG_RETURN_IF_NOT(data.bytes.size() == ElementSize(data.dtype), "attribute 'value' has ",
                       data.bytes.size() / std::max<size_t>(ElementSize(data.dtype), 1),
                       " elements, not one");
      std::memcpy(&pattern, data.bytes.data(), data.bytes.size());
    }
    return std::unique_ptr<OpKernel>(new ConstantOfShapeKernel(info, pattern));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    DeviceTensor& y = *ctx.outputs[0];
    if (y.numel() == 0) return Status::Ok();
    if (pattern_ == 0) return M::Zero(y.data(), y.byte_size(), ctx);
    return M::Fill(y.data(), y.element_size(), pattern_, y.numel(), ctx);
  }

 private:
  ConstantOfShapeKernel(const KernelInfo& info, uint64_t pattern)
      : OpKernel(info), pattern_(pattern) {}
  uint64_t pattern_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_DATA_MOVEMENT_SHAPES_H_
