#include "zerograph/ir/tensor_type.h"

#include "zerograph/core/str_cat.h"

namespace zerograph {

std::optional<int64_t> TensorType::numel() const {
  if (!dims) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *dims) {
    if (d < 0) return std::nullopt;
    n *= d;
  }
  return n;
}

std::string TensorType::ToString() const {
  std::string out(DataTypeName(dtype));
  if (!dims) return out + "[*]";
  out += '[';
  for (size_t i = 0; i < dims->size(); ++i) {
    if (i > 0) out += ',';
    int64_t d = (*dims)[i];
    out += d < 0 ? std::string("?") : StrCat(d);
  }
  out += ']';
  return out;
}

}  // namespace zerograph
