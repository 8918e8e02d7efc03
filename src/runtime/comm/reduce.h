#ifndef ZEROGRAPH_SRC_RUNTIME_COMM_REDUCE_H_
#define ZEROGRAPH_SRC_RUNTIME_COMM_REDUCE_H_

#include <cstddef>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::runtime {

// True for the dtypes a reduction supports: fp32, fp16, bf16, float64, int32, int64.
bool IsReducible(DataType dtype);
// True for the floating types, which can be averaged.
bool IsFloating(DataType dtype);

// out[i] = (a[i] + b[i]) / divisor, computed in fp32 for fp16 and bf16 (rounded once), in the
// type itself otherwise; divisor 1 is a plain sum. `out` may equal `a` or `b`. The CPU
// communicators' local step.
void AddElements(DataType dtype, const void* a, const void* b, void* out, size_t count,
                 int divisor = 1);
// data[i] /= divisor (floating types only).
void DivideElements(DataType dtype, void* data, size_t count, int divisor);

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_COMM_REDUCE_H_
