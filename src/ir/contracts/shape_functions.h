#ifndef ZEROGRAPH_SRC_IR_CONTRACTS_SHAPE_FUNCTIONS_H_
#define ZEROGRAPH_SRC_IR_CONTRACTS_SHAPE_FUNCTIONS_H_

// Shape functions that several ops share.

#include <cstddef>
#include <optional>
#include <vector>

#include "zerograph/core/num_elements.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph::contracts {

// One output with input 0's dtype and shape (Relu, Identity, Nop, AllReduce).
StatusOr<std::vector<TensorSpec>> SameAsFirstInput(const ShapeContext& ctx);
// Two inputs of one dtype, broadcast (numpy): one output of that dtype (Add, Mul).
StatusOr<std::vector<TensorSpec>> BroadcastBinary(const ShapeContext& ctx);
// As BroadcastBinary, with a bool output (Greater, Equal).
StatusOr<std::vector<TensorSpec>> BroadcastComparison(const ShapeContext& ctx);
// Two inputs of one dtype and one shape: one output like them (ReluGrad).
StatusOr<std::vector<TensorSpec>> SameShapeBinary(const ShapeContext& ctx);

// OpContract::keeps_input_shape rules.
// True for input 0 (Identity, Relu, Cast); nullopt for the others.
std::optional<bool> FirstInputKeepsShape(const Node& node, size_t input);
// Numpy broadcasting against scalars keeps a shape: true when every other input is known to have
// rank 0 (a gradient scaled by a constant); nullopt otherwise.
std::optional<bool> KeepsShapeAgainstScalars(const Node& node, size_t input);
// The rule that holds for every op whose shape function is `infer` (SameAsFirstInput, the
// broadcasts), or null.
KeepsInputShape KeepsInputShapeRuleOf(ShapeFunction infer);

}  // namespace zerograph::contracts

#endif  // ZEROGRAPH_SRC_IR_CONTRACTS_SHAPE_FUNCTIONS_H_
