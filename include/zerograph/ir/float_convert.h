#ifndef ZEROGRAPH_IR_FLOAT_CONVERT_H_
#define ZEROGRAPH_IR_FLOAT_CONVERT_H_

#include <cstddef>
#include <span>
#include <string>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph {

// The elements of `bytes` (dtype `from`) as dtype `to`, rounded to nearest even; both dtypes are
// floating (fp32, fp64, fp16, bf16). How the rewrite stores an initializer in another precision
// (AMP's low-precision parameters, fp32 master weights and states).
StatusOr<std::string> ConvertFloatElements(std::span<const std::byte> bytes, DataType from,
                                           DataType to);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_FLOAT_CONVERT_H_
