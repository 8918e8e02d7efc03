#ifndef ZEROGRAPH_IR_TENSOR_TYPE_H_
#define ZEROGRAPH_IR_TENSOR_TYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zerograph/ir/dtype.h"

namespace zerograph {

// The static type of a tensor value: element type and, when known, its dimensions. A dimension
// that is symbolic or unknown is kUnknownDim; an unknown rank is an empty `dims` optional.
struct TensorType {
  static constexpr int64_t kUnknownDim = -1;

  DataType dtype = DataType::kUndefined;
  std::optional<std::vector<int64_t>> dims;

  // Elements in the tensor, or nullopt when any dimension is unknown.
  std::optional<int64_t> numel() const;
  // "float[16,8]", "float16[?,4]", "int64[*]" (unknown rank).
  std::string ToString() const;

  friend bool operator==(const TensorType&, const TensorType&) = default;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_TENSOR_TYPE_H_
