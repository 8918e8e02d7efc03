#ifndef ZEROGRAPH_SRC_IR_CONTRACTS_OPTIMIZER_SHAPE_H_
#define ZEROGRAPH_SRC_IR_CONTRACTS_OPTIMIZER_SHAPE_H_

// The shape function of every multi-tensor optimizer (OptimizerLayout): each parameter's gradient
// and states match it, and the outputs are the new parameters and states, like their inputs.

#include <vector>

#include "zerograph/ir/op_contract.h"

namespace zerograph::contracts {

// Checks that input `index` is a scalar of one of `dtypes`; `what` names it in the error.
Status CheckScalarInput(const ShapeContext& ctx, size_t index, std::span<const DataType> dtypes,
                        std::string_view what);

// The outputs X1'..Xn', S1_1'..Sk_n' of an optimizer node with `layout`.
StatusOr<std::vector<TensorSpec>> OptimizerOutputs(const ShapeContext& ctx,
                                                   const OptimizerLayout& layout);

}  // namespace zerograph::contracts

#endif  // ZEROGRAPH_SRC_IR_CONTRACTS_OPTIMIZER_SHAPE_H_
