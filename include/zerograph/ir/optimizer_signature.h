#ifndef ZEROGRAPH_IR_OPTIMIZER_SIGNATURE_H_
#define ZEROGRAPH_IR_OPTIMIZER_SIGNATURE_H_

#include <optional>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph {

class Node;
class Value;

// An optimizer node's op and its contract's OptimizerLayout (zerograph/ir/op_contract.h): what the
// sharding pass, role inference and checkpoints need to split it per parameter.
struct OptimizerSignature {
  std::string_view domain;
  std::string_view op_type;
  // Leading inputs shared by all parameters (learning rate, step).
  int num_scalars;
  // State tensors per parameter (AdamW: 2, Momentum: 1, SGD: 0).
  int num_states;
  // Whether a trailing `control` input may follow the groups (org.zerograph AdamW and SGD).
  bool optional_control = false;
};

// The signature of `node` when its op contract declares an optimizer layout (org.zerograph AdamW
// and SGD, ai.onnx.preview.training Adam, Momentum and Adagrad), else nullopt.
std::optional<OptimizerSignature> FindOptimizerSignature(const Node& node);

// One parameter's share of a multi-tensor optimizer node.
struct OptimizerSlot {
  Value* param;
  Value* grad;
  std::vector<Value*> states;
  Value* new_param;
  std::vector<Value*> new_states;
};

// Splits `node`'s inputs and outputs into per-parameter slots; fails (naming the node) when the
// counts do not fit the signature. The control input belongs to no slot.
StatusOr<std::vector<OptimizerSlot>> OptimizerSlots(const Node& node,
                                                    const OptimizerSignature& signature);

// `node`'s control input (scales every gradient, may skip the update), or null when it has none.
// A rewrite that splits or merges the node's slots passes it on to each node it makes.
Value* OptimizerControl(const Node& node, const OptimizerSignature& signature);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_OPTIMIZER_SIGNATURE_H_
