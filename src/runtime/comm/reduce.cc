#include "runtime/comm/reduce.h"

#include <cstdint>

#include "zerograph/runtime/half.h"

namespace zerograph::runtime {
namespace {

template <typename T>
void AddTyped(const void* a, const void* b, void* out, size_t count, int divisor) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  if (divisor == 1) {
#pragma GCC ivdep
    for (size_t i = 0; i < count; ++i) po[i] = pa[i] + pb[i];
  } else {
    const T d = static_cast<T>(divisor);
#pragma GCC ivdep
    for (size_t i = 0; i < count; ++i) po[i] = (pa[i] + pb[i]) / d;
  }
}

template <typename T>
void AddNarrow(const void* a, const void* b, void* out, size_t count, int divisor) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  const float d = static_cast<float>(divisor);
#pragma GCC ivdep
  for (size_t i = 0; i < count; ++i) po[i] = FromFloat<T>((ToFloat(pa[i]) + ToFloat(pb[i])) / d);
}

}  // namespace

bool IsReducible(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat64:
    case DataType::kInt32:
    case DataType::kInt64:
      return true;
    default:
      return false;
  }
}

bool IsFloating(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 ||
         dtype == DataType::kBFloat16 || dtype == DataType::kFloat64;
}

void AddElements(DataType dtype, const void* a, const void* b, void* out, size_t count,
                 int divisor) {
  switch (dtype) {
    case DataType::kFloat32:
      return AddTyped<float>(a, b, out, count, divisor);
    case DataType::kFloat64:
      return AddTyped<double>(a, b, out, count, divisor);
    case DataType::kInt32:
      return AddTyped<int32_t>(a, b, out, count, divisor);
    case DataType::kInt64:
      return AddTyped<int64_t>(a, b, out, count, divisor);
    case DataType::kFloat16:
      return AddNarrow<Float16>(a, b, out, count, divisor);
    case DataType::kBFloat16:
      return AddNarrow<BFloat16>(a, b, out, count, divisor);
    default:
      return;
  }
}

void DivideElements(DataType dtype, void* data, size_t count, int divisor) {
  switch (dtype) {
    case DataType::kFloat32: {
      float* p = static_cast<float*>(data);
      const float d = static_cast<float>(divisor);
      for (size_t i = 0; i < count; ++i) p[i] /= d;
      return;
    }
    case DataType::kFloat64: {
      double* p = static_cast<double*>(data);
      for (size_t i = 0; i < count; ++i) p[i] /= divisor;
      return;
    }
    case DataType::kFloat16: {
      Float16* p = static_cast<Float16*>(data);
      for (size_t i = 0; i < count; ++i) p[i] = FromFloat<Float16>(ToFloat(p[i]) / divisor);
      return;
    }
    case DataType::kBFloat16: {
      BFloat16* p = static_cast<BFloat16*>(data);
      for (size_t i = 0; i < count; ++i) p[i] = FromFloat<BFloat16>(ToFloat(p[i]) / divisor);
      return;
    }
    default:
      return;
  }
}

}  // namespace zerograph::runtime
