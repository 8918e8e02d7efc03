#ifndef ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_
#define ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_

#include <string>
#include <vector>

namespace zerograph {

class Node;
class Value;

// The path from a gradient back to the backward op that computes it:
//
//   B (backward) ──> Dk ──> ... ──> D1 ──> D0 ──> gradient
//
// where each Di is a non-backward node with one dynamic input (casts, scales: constants such as
// initializers no optimizer updates and `Constant` outputs do not count). Moving D0..Dk right after
// B makes the gradient ready as early as backward allows.
struct GradientChain {
  // B, or null when the walk stopped before reaching a backward op (see `stop_reason`).
  Node* backward_op = nullptr;
  // D0 first (the gradient's producer), Dk last.
  std::vector<Node*> chain;
  std::string stop_reason;
};

// Walks up from `gradient`'s producer.
GradientChain FindGradientChain(const Value& gradient);

// True for inputs that are ready before the step starts: initializers that no optimizer reads and
// outputs of `Constant` nodes.
bool IsStepConstant(const Value& value);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_
