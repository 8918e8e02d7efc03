#include "zerograph/ir/float_convert.h"

#include <cstdint>
#include <cstring>

#include "zerograph/ir/half_bits.h"

namespace zerograph {
namespace {

double Load(const std::byte* at, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: {
      float value;
      std::memcpy(&value, at, sizeof(value));
      return value;
    }
    case DataType::kFloat64: {
      double value;
      std::memcpy(&value, at, sizeof(value));
      return value;
    }
    default: {
      uint16_t bits;
      std::memcpy(&bits, at, sizeof(bits));
      return dtype == DataType::kFloat16 ? HalfBitsToFloat(bits) : BFloat16BitsToFloat(bits);
    }
  }
}

// fp64 goes to the 16-bit formats through fp32, so a value within fp32's rounding of a tie can
// round twice (at most one unit in the last place off); fp64 parameters are rare.
void Store(double value, DataType dtype, std::byte* at) {
  switch (dtype) {
    case DataType::kFloat32: {
      const float narrow = static_cast<float>(value);
      std::memcpy(at, &narrow, sizeof(narrow));
      return;
    }
    case DataType::kFloat64:
      std::memcpy(at, &value, sizeof(value));
      return;
    default: {
      const float narrow = static_cast<float>(value);
      const uint16_t bits =
          dtype == DataType::kFloat16 ? FloatToHalfBits(narrow) : FloatToBFloat16Bits(narrow);
      std::memcpy(at, &bits, sizeof(bits));
      return;
    }
  }
}

bool IsConvertible(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
         dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

}  // namespace

StatusOr<std::string> ConvertFloatElements(std::span<const std::byte> bytes, DataType from,
                                           DataType to) {
  ZG_RETURN_IF_NOT(IsConvertible(from) && IsConvertible(to), "cannot convert ", DataTypeName(from),
                   " elements to ", DataTypeName(to), ": both must be floating");
  const size_t in_size = ElementSize(from);
  const size_t out_size = ElementSize(to);
  ZG_RETURN_IF_NOT(bytes.size() % in_size == 0, bytes.size(), " bytes are no whole number of ",
                   DataTypeName(from), " elements");
  const size_t n = bytes.size() / in_size;
  std::string out(n * out_size, '\0');
  auto* to_bytes = reinterpret_cast<std::byte*>(out.data());
  for (size_t i = 0; i < n; ++i)
    Store(Load(&bytes[i * in_size], from), to, &to_bytes[i * out_size]);
  return out;
}

}  // namespace zerograph
