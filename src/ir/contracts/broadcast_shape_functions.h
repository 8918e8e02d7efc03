#ifndef ZEROGRAPH_SRC_IR_CONTRACTS_BROADCAST_SHAPE_FUNCTIONS_H_
#define ZEROGRAPH_SRC_IR_CONTRACTS_BROADCAST_SHAPE_FUNCTIONS_H_

// Shape functions of the element-wise ops that broadcast more than two inputs, or inputs of
// different dtypes.

#include <vector>

#include "zerograph/ir/op_contract.h"

namespace zerograph::contracts {

// Every input of one dtype, broadcast together (numpy): one output of that dtype (Max, Sum).
StatusOr<std::vector<TensorSpec>> BroadcastVariadic(const ShapeContext& ctx);
// Where(condition, X, Y): a bool condition and X, Y of one dtype, broadcast three ways; the output
// has X's dtype.
StatusOr<std::vector<TensorSpec>> WhereShape(const ShapeContext& ctx);
// Two inputs of any dtypes broadcast; the output has input 0's dtype (Pow's base and exponent).
StatusOr<std::vector<TensorSpec>> BroadcastLikeFirst(const ShapeContext& ctx);

}  // namespace zerograph::contracts

#endif  // ZEROGRAPH_SRC_IR_CONTRACTS_BROADCAST_SHAPE_FUNCTIONS_H_
