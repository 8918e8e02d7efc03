// The element-wise ops with attributes or inputs of mixed dtypes on the CPU: LeakyRelu, Gelu,
// Clip (bounds as attributes or as inputs), Pow and Mod. Their math is elementwise_attr_ops.h's.

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/kernels/cpu/binary_loop.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/vector_math.h"
#include "runtime/kernels/elementwise_attr_ops.h"
#include "runtime/kernels/elementwise_shapes.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

namespace ew = elementwise;

// y[i] = fn(x[i]) for the functor the kernel was made with.
template <typename T, template <typename> class Fn>
class MapKernel final : public UnaryKernelBase {
 public:
  MapKernel(const KernelInfo& info, Fn<ArithType<T>> fn) : UnaryKernelBase(info), fn_(fn) {}

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const T* x = ctx.inputs[0]->data_as<const T>();
    T* y = ctx.outputs[0]->data_as<T>();
    const int64_t n = ctx.outputs[0]->numel();
    const Fn<ArithType<T>> fn = fn_;
    for (int64_t i = 0; i < n; ++i) y[i] = Store<T>(fn(Load(x[i])));
    return Status::Ok();
  }

 private:
  Fn<ArithType<T>> fn_;
};

template <typename T>
struct LeakyRelu {
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(float alpha, ContractFloat(*info.node, "alpha"));
    using A = ArithType<T>;
    return std::unique_ptr<OpKernel>(
        new MapKernel<T, ew::LeakyReluFn>(info, {static_cast<A>(alpha)}));
  }
};

// Exact Gelu of floats, GeluMath::Exact with erf() taken eight at a time (vector_math.h): the
// scalar erf was most of the op's time.
class GeluExactFloatKernel final : public UnaryKernelBase {
 public:
  using UnaryKernelBase::UnaryKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const float* x = ctx.inputs[0]->data_as<const float>();
    float* y = ctx.outputs[0]->data_as<float>();
    const int64_t n = ctx.outputs[0]->numel();
    constexpr int64_t kChunk = 1024;  // erf's arguments, on the stack: y may be x
    float t[kChunk];
    for (int64_t start = 0; start < n; start += kChunk) {
      const int64_t count = std::min(kChunk, n - start);
      const float* xs = x + start;
      for (int64_t i = 0; i < count; ++i) t[i] = xs[i] * 0.70710678118654752440f;
      VectorErf(t, t, count);
      float* ys = y + start;
      for (int64_t i = 0; i < count; ++i) ys[i] = 0.5f * xs[i] * (1.0f + t[i]);
    }
    return Status::Ok();
  }
};

template <typename T>
struct Gelu {
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const StatusOr<std::string> approximate = ContractString(*info.node, "approximate");
    if (!approximate.ok()) return approximate.status();
    if (*approximate == "tanh") {
      return std::unique_ptr<OpKernel>(new MapKernel<T, ew::GeluTanhFn>(info, {}));
    }
    if constexpr (std::is_same_v<T, float>) {
      return std::unique_ptr<OpKernel>(new GeluExactFloatKernel(info));
    }
    return std::unique_ptr<OpKernel>(new MapKernel<T, ew::GeluExactFn>(info, {}));
  }
};

// The widest bound of A: infinity for floats, so that an absent bound lets infinities through.
template <typename A>
A Unbounded(bool upper) {
  if constexpr (std::numeric_limits<A>::has_infinity) {
    return upper ? std::numeric_limits<A>::infinity() : -std::numeric_limits<A>::infinity();
  } else {
    return upper ? std::numeric_limits<A>::max() : std::numeric_limits<A>::lowest();
  }
}

// Clip-6: bounds from the attributes.
template <typename T>
struct ClipByAttributes {
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(float lo, ContractFloat(*info.node, "min"));
    ZG_ASSIGN_OR_RETURN(float hi, ContractFloat(*info.node, "max"));
    using A = ArithType<T>;
    return std::unique_ptr<OpKernel>(
        new MapKernel<T, ew::ClipFn>(info, {static_cast<A>(lo), static_cast<A>(hi)}));
  }
};

// Clip-11: bounds from the optional scalar inputs 1 and 2, read when it runs.
template <typename T>
class ClipByInputs final : public UnaryKernelBase {
 public:
  using UnaryKernelBase::UnaryKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<ClipByInputs>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    using A = ArithType<T>;
    ew::ClipFn<A> clip{Unbounded<A>(false), Unbounded<A>(true)};
    for (size_t i : {size_t{1}, size_t{2}}) {
      const DeviceTensor* bound = i < ctx.inputs.size() ? ctx.inputs[i] : nullptr;
      if (bound == nullptr) continue;
      ZG_RETURN_IF_NOT(bound->numel() == 1, i == 1 ? "min" : "max", " ",
                       ShapeToString(bound->shape()), " is not a single value");
      (i == 1 ? clip.lo : clip.hi) = Load(bound->data_as<const T>()[0]);
    }
    const T* x = ctx.inputs[0]->data_as<const T>();
    T* y = ctx.outputs[0]->data_as<T>();
    const int64_t n = ctx.outputs[0]->numel();
    for (int64_t i = 0; i < n; ++i) y[i] = Store<T>(clip(Load(x[i])));
    return Status::Ok();
  }
};

// Pow: the base's dtype selects the kernel; the exponent's is dispatched when it runs.
template <typename T>
class PowKernel final : public BinaryKernelBase {
 public:
  using BinaryKernelBase::BinaryKernelBase;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<PowKernel>(info);
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& base = *ctx.inputs[0];
    const DeviceTensor& exponent = *ctx.inputs[1];
    DeviceTensor& out = *ctx.outputs[0];
    return DispatchDtypes(AllNumericDtypes{}, exponent.dtype(), [&](auto tag) -> Status {
      using E = decltype(tag);
      BroadcastBinary(base.data_as<const T>(), base.shape(), exponent.data_as<const E>(),
                      exponent.shape(), out.data_as<T>(), out.shape(),
                      [](auto b, auto e) { return Store<T>(ew::PowOf(b, e)); });
      return Status::Ok();
    });
  }
};

template <typename T, template <typename> class Fn>
class ModKernel final : public BinaryKernelBase {
 public:
  using BinaryKernelBase::BinaryKernelBase;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& out = *ctx.outputs[0];
    const Fn<ArithType<T>> fn;
    BroadcastBinary(a.data_as<const T>(), a.shape(), b.data_as<const T>(), b.shape(),
                    out.data_as<T>(), out.shape(),
                    [&](auto x, auto y) { return Store<T>(fn(x, y)); });
    return Status::Ok();
  }
};

template <typename T>
struct Mod {
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t fmod, ContractInt(*info.node, "fmod"));
    if constexpr (std::is_integral_v<T>) {
      if (fmod == 0) return std::unique_ptr<OpKernel>(new ModKernel<T, ew::FlooredModFn>(info));
    } else if (fmod == 0) {
      return InvalidArgumentError(StrCat("Mod of ", DataTypeName(info.dtype),
                                         " needs fmod=1 (ONNX defines fmod=0 for integers only)"));
    }
    return std::unique_ptr<OpKernel>(new ModKernel<T, ew::TruncatedModFn>(info));
  }
};

template <template <typename> class Kernel, DataType... Ds>
Status Register(KernelRegistry& registry, std::string op, DtypeList<Ds...>,
                std::vector<int> host_inputs = {}) {
  return registry.Register({"",
                            std::move(op),
                            DeviceType::kCpu,
                            {Ds...},
                            0,
                            std::move(host_inputs),
                            MakeTypedKernel<Kernel, Ds...>});
}

// One factory for both Clip contracts: which one the node has says where the bounds are.
template <typename T>
struct Clip {
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.contract->since_version < 11) {
      if constexpr (std::is_floating_point_v<ArithType<T>>)
        return ClipByAttributes<T>::Create(info);
      return InvalidArgumentError(StrCat("Clip-6 does not take ", DataTypeName(info.dtype)));
    }
    return ClipByInputs<T>::Create(info);
  }
};

}  // namespace

Status RegisterCpuElementwiseAttrKernels(KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(Register<LeakyRelu>(registry, "LeakyRelu", FloatDtypes{}));
  ZG_RETURN_IF_ERROR(Register<Gelu>(registry, "Gelu", FloatDtypes{}));
  ZG_RETURN_IF_ERROR(Register<Clip>(registry, "Clip", AllNumericDtypes{}, {1, 2}));
  ZG_RETURN_IF_ERROR(Register<PowKernel>(registry, "Pow", NumericDtypes{}));
  return Register<Mod>(registry, "Mod", AllNumericDtypes{});
}

}  // namespace zerograph::runtime
