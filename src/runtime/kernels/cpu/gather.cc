// The CPU's indexed kernels (kernels/gather_shapes.h): Gather and GatherGrad by rows of the inner
// dimensions, GatherElements and ScatterElements element by element, Trilu by row ranges.

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/gather_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

// Calls fn(Word{}) with an unsigned type of `size` bytes: moving elements without their type.
template <typename Fn>
void DispatchWord(size_t size, Fn&& fn) {
  switch (size) {
    case 1:
      fn(uint8_t{});
      break;
    case 2:
      fn(uint16_t{});
      break;
    case 4:
      fn(uint32_t{});
      break;
    default:
      fn(uint64_t{});
      break;
  }
}

// The indices of an int32 or int64 tensor, each checked against `dim` and made non-negative.
StatusOr<std::vector<int64_t>> CheckedIndices(const DeviceTensor& indices, int64_t dim) {
  std::vector<int64_t> out(static_cast<size_t>(indices.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t index = indices.dtype() == DataType::kInt32 ? indices.data_as<const int32_t>()[i]
                                                              : indices.data_as<const int64_t>()[i];
    ZG_ASSIGN_OR_RETURN(out[i], CheckedIndex(index, dim));
  }
  return out;
}

// Calls fn(i, base) for each element i of `shape` (row-major), where base is its offset in a
// tensor of `strides` with the axis' own index left out.
template <typename Fn>
void ForEachWithBase(const Shape& shape, Shape strides, size_t axis, Fn&& fn) {
  if (NumElements(shape) == 0) return;
  strides[axis] = 0;
  const BroadcastPlan plan = CollapsePlan(shape, {std::move(strides)});
  const int64_t stride = plan.strides[0].back();
  int64_t i = 0;
  ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
    for (int64_t j = 0; j < n; ++j) fn(i++, offsets[0] + j * stride);
  });
}

class GatherKernel final : public AxisKernelBase {
 public:
  using AxisKernelBase::AxisKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(x.rank()));
    const AxisSplit at = SplitAtAxis(x.shape(), axis);
    ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> indices, CheckedIndices(*ctx.inputs[1], at.dim));
    const size_t row = static_cast<size_t>(at.inner) * x.element_size();
    const auto* in = static_cast<const std::byte*>(x.data());
    auto* out = static_cast<std::byte*>(y.data());
    for (int64_t o = 0; o < at.outer; ++o) {
      for (int64_t k : indices) {
        std::memcpy(out, in + static_cast<size_t>(o * at.dim + k) * row, row);
        out += row;
      }
    }
    return Status::Ok();
  }
};

class GatherElementsKernel final : public AxisKernelBase {
 public:
  using AxisKernelBase::AxisKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(x.rank()));
    ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> indices,
                        CheckedIndices(*ctx.inputs[1], x.dim(static_cast<int64_t>(axis))));
    const int64_t axis_stride = x.strides()[axis];
    DispatchWord(x.element_size(), [&](auto word) {
      using Word = decltype(word);
      const Word* in = x.data_as<const Word>();
      Word* out = y.data_as<Word>();
      ForEachWithBase(y.shape(), x.strides(), axis, [&](int64_t i, int64_t base) {
        out[i] = in[base + indices[static_cast<size_t>(i)] * axis_stride];
      });
    });
    return Status::Ok();
  }
};

// The reductions on a typed element; none is a plain store.
template <typename T>
T Reduce(ScatterReduction reduction, T old, T update) {
  using A = ArithType<T>;
  const A a = Load(old), b = Load(update);
  switch (reduction) {
    case ScatterReduction::kAdd:
      if constexpr (std::is_same_v<T, bool>) return a || b;
      return Store<T>(static_cast<A>(a + b));
    case ScatterReduction::kMul:
      if constexpr (std::is_same_v<T, bool>) return a && b;
      return Store<T>(static_cast<A>(a * b));
    case ScatterReduction::kMax:
      return Store<T>(std::max(a, b));
    case ScatterReduction::kMin:
      return Store<T>(std::min(a, b));
    case ScatterReduction::kNone:
      break;
  }
  return update;
}

template <typename T>
class ScatterElementsKernel final : public ScatterElementsKernelBase {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(Attrs attrs, ParseAttrs(info));
    return std::unique_ptr<OpKernel>(new ScatterElementsKernel(info, attrs));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    const DeviceTensor& updates = *ctx.inputs[2];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(x.rank()));
    ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> indices,
                        CheckedIndices(*ctx.inputs[1], x.dim(static_cast<int64_t>(axis))));
    CopyUnlessSame(x, y);
    const int64_t axis_stride = x.strides()[axis];
    const T* from = updates.data_as<const T>();
    T* out = y.data_as<T>();
    ForEachWithBase(updates.shape(), x.strides(), axis, [&](int64_t i, int64_t base) {
      T& target = out[base + indices[static_cast<size_t>(i)] * axis_stride];
      target = Reduce(reduction_, target, from[i]);
    });
    return Status::Ok();
  }

 private:
  using ScatterElementsKernelBase::ScatterElementsKernelBase;
};

// ScatterElements for every dtype: by element type where CppType knows it, else (int16, the
// unsigned 16- to 64-bit ones) by a word of its size, which only reduction "none" needs.
StatusOr<std::unique_ptr<OpKernel>> CreateScatterElements(const KernelInfo& info) {
  using enum DataType;
  StatusOr<std::unique_ptr<OpKernel>> typed =
      MakeTypedKernel<ScatterElementsKernel, kFloat32, kFloat64, kFloat16, kBFloat16, kInt64,
                      kInt32, kInt8, kUint8, kBool>(info);
  if (typed.ok() || typed.status().code() != StatusCode::kUnimplemented) return typed;
  ZG_ASSIGN_OR_RETURN(const ScatterElementsKernelBase::Attrs attrs,
                      ScatterElementsKernelBase::ParseAttrs(info));
  ZG_RETURN_IF_NOT(attrs.reduction == ScatterReduction::kNone, "ScatterElements with a reduction ",
                   "has no CPU code for ", DataTypeName(info.dtype));
  switch (ElementSize(info.dtype)) {
    case 2:
      return ScatterElementsKernel<uint16_t>::Create(info);
    case 4:
      return ScatterElementsKernel<uint32_t>::Create(info);
    default:
      return ScatterElementsKernel<uint64_t>::Create(info);
  }
}

// GatherGrad: dX = 0, then dX[o, indices[j], :] += dY[o, j, :].
template <typename T>
class GatherGradKernel final : public AxisKernelBase {
 public:
  using AxisKernelBase::AxisKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& dy = *ctx.inputs[2];
    DeviceTensor& dx = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const size_t axis, Axis(dx.rank()));
    const AxisSplit at = SplitAtAxis(dx.shape(), axis);
    ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> indices, CheckedIndices(*ctx.inputs[1], at.dim));
    std::memset(dx.data(), 0, dx.byte_size());
    const T* from = dy.data_as<const T>();
    T* out = dx.data_as<T>();
    for (int64_t o = 0; o < at.outer; ++o) {
      for (int64_t k : indices) {
        T* row = out + (o * at.dim + k) * at.inner;
        for (int64_t t = 0; t < at.inner; ++t) row[t] = Store<T>(Load(row[t]) + Load(from[t]));
        from += at.inner;
      }
    }
    return Status::Ok();
  }
};

class TriluKernel final : public TriluKernelBase {
 public:
  using TriluKernelBase::TriluKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& x = *ctx.inputs[0];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(const int64_t k, K(ctx));
    const int64_t rows = x.dim(x.rank() - 2);
    const int64_t cols = x.dim(x.rank() - 1);
    const size_t size = x.element_size();
    const auto* in = static_cast<const std::byte*>(x.data());
    auto* out = static_cast<std::byte*>(y.data());
    const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    for (int64_t m = 0; m < matrices * rows; ++m) {
      const int64_t i = m % rows;
      // Row i keeps columns j with j - i >= k (upper) or j - i <= k (lower).
      const int64_t begin = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t end = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      const size_t row = static_cast<size_t>(m * cols) * size;
      std::memset(out + row, 0, static_cast<size_t>(cols) * size);
      if (end > begin) {
        std::memcpy(out + row + static_cast<size_t>(begin) * size,
                    in + row + static_cast<size_t>(begin) * size,
                    static_cast<size_t>(end - begin) * size);
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuGatherKernels(KernelRegistry& registry) {
  constexpr auto kCpu = DeviceType::kCpu;
  const std::vector<DataType> all = AllDtypes::Vector();
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Gather", kCpu, all, 0, {}, MakeKernelWithAttrs<GatherKernel>}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {"", "GatherElements", kCpu, all, 0, {}, MakeKernelWithAttrs<GatherElementsKernel>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "ScatterElements", kCpu, all, 0, {}, &CreateScatterElements}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Scatter", kCpu, AllButBFloat16(), 0, {}, &CreateScatterElements}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Trilu", kCpu, all, 0, {}, MakeKernelWithAttrs<TriluKernel>}));
  return registry.Register(
      {"com.microsoft",
       "GatherGrad",
       kCpu,
       FloatDtypes::Vector(),
       2,
       {},
       [](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
         ZG_ASSIGN_OR_RETURN(const int64_t axis, AxisKernelBase::ParseAttrs(info));
         return DispatchDtypes(
             FloatDtypes{}, info.dtype, [&](auto tag) -> StatusOr<std::unique_ptr<OpKernel>> {
               return std::unique_ptr<OpKernel>(new GatherGradKernel<decltype(tag)>(info, axis));
             });
       }});
}

}  // namespace zerograph::runtime
