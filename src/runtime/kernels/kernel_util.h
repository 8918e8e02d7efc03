#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_KERNEL_UTIL_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_KERNEL_UTIL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "runtime/kernels/dtype_list.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/node.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/half.h"
#include "zerograph/runtime/kernel.h"

namespace zerograph::runtime {

// --- Attributes, with the defaults of the node's op contract (absent without a default is an
// error naming the attribute, as is another type).
using zerograph::ContractFloat;
using zerograph::ContractInt;
using zerograph::ContractInts;
using zerograph::ContractString;

// Checks a node's `nranks` attribute, when it has one, against the ranks running it: a graph
// rewritten for N ranks runs only on N.
Status CheckNranksAttribute(const KernelInfo& info);

// --- Shapes.
using zerograph::NormalizeAxis;
// The values of a 1-D (or scalar) int64 tensor on the host.
StatusOr<std::vector<int64_t>> ReadInt64Values(const DeviceTensor& tensor, std::string_view what);

// --- Element types. The C++ type of each dtype the CPU kernels handle.
template <DataType D>
struct CppType;
template <>
struct CppType<DataType::kFloat32> {
  using type = float;
};
template <>
struct CppType<DataType::kFloat64> {
  using type = double;
};
template <>
struct CppType<DataType::kFloat16> {
  using type = Float16;
};
template <>
struct CppType<DataType::kBFloat16> {
  using type = BFloat16;
};
template <>
struct CppType<DataType::kInt64> {
  using type = int64_t;
};
template <>
struct CppType<DataType::kInt32> {
  using type = int32_t;
};
template <>
struct CppType<DataType::kInt8> {
  using type = int8_t;
};
template <>
struct CppType<DataType::kUint8> {
  using type = uint8_t;
};
template <>
struct CppType<DataType::kInt16> {
  using type = int16_t;
};
template <>
struct CppType<DataType::kUint16> {
  using type = uint16_t;
};
template <>
struct CppType<DataType::kUint32> {
  using type = uint32_t;
};
template <>
struct CppType<DataType::kUint64> {
  using type = uint64_t;
};
template <>
struct CppType<DataType::kBool> {
  using type = bool;
};

// The type arithmetic on T happens in: fp32 for the 16-bit floats, T itself otherwise.
template <typename T>
inline constexpr bool kIsNarrowFloat = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
using ArithType = std::conditional_t<kIsNarrowFloat<T>, float, T>;
template <typename T>
inline ArithType<T> Load(T value) {
  if constexpr (kIsNarrowFloat<T>) {
    return ToFloat(value);
  } else {
    return value;
  }
}
template <typename T>
inline T Store(ArithType<T> value) {
  if constexpr (kIsNarrowFloat<T>) {
    return FromFloat<T>(value);
  } else {
    return value;
  }
}

// Calls fn(T{}) with T the C++ type of `dtype`, for dtype in `Dtypes...`; returns Unimplemented
// for any other dtype.
template <DataType... Dtypes, typename Fn>
auto DispatchDtype(DataType dtype, Fn&& fn) -> decltype(fn(float{})) {
  using Result = decltype(fn(float{}));
  std::optional<Result> result;
  ((dtype == Dtypes ? (result.emplace(fn(typename CppType<Dtypes>::type{})), true) : false) || ...);
  if (result) return std::move(*result);
  return UnimplementedError(StrCat("no CPU code for dtype ", DataTypeName(dtype)));
}

// DispatchDtype over the dtypes of a DtypeList.
template <DataType... Dtypes, typename Fn>
auto DispatchDtypes(DtypeList<Dtypes...>, DataType dtype, Fn&& fn) {
  return DispatchDtype<Dtypes...>(dtype, std::forward<Fn>(fn));
}

// A factory for a kernel class template instantiated per element type:
// MakeTypedKernel<AddKernel, kFloat32, kFloat64>(info).
template <template <typename> class Kernel, DataType... Dtypes>
StatusOr<std::unique_ptr<OpKernel>> MakeTypedKernel(const KernelInfo& info) {
  return DispatchDtype<Dtypes...>(info.dtype, [&](auto tag) -> StatusOr<std::unique_ptr<OpKernel>> {
    return Kernel<decltype(tag)>::Create(info);
  });
}

// The same as a factory for the dtypes of a DtypeList: TypedFactory<AddKernel,
// FloatDtypes>::Create.
template <template <typename> class Kernel, typename List>
struct TypedFactory;
template <template <typename> class Kernel, DataType... Dtypes>
struct TypedFactory<Kernel, DtypeList<Dtypes...>> {
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeTypedKernel<Kernel, Dtypes...>(info);
  }
};

// The usual Create for kernels whose constructor cannot fail.
template <typename K>
StatusOr<std::unique_ptr<OpKernel>> MakeKernel(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(new K(info));
}

// Create for kernels made from attributes parsed first: K::ParseAttrs(info), then K(info, attrs).
template <typename K>
StatusOr<std::unique_ptr<OpKernel>> MakeKernelWithAttrs(const KernelInfo& info) {
  ZG_ASSIGN_OR_RETURN(auto attrs, K::ParseAttrs(info));
  return std::unique_ptr<OpKernel>(new K(info, std::move(attrs)));
}

// The parameters of the optimizer node a kernel is made for (its contract's layout; the registry
// has checked the counts).
size_t OptimizerParams(const KernelInfo& info);

// An optimizer's outputs (X', then each state's) in place over the inputs they update.
void UpdateInPlace(const OptimizerLayout& layout, std::span<OutputInfo> outputs);

// Copies `src` into `dst` (same byte size) unless the executor made `dst` that very view.
void CopyUnlessSame(const DeviceTensor& src, const DeviceTensor& dst);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_KERNEL_UTIL_H_
