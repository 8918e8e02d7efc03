#ifndef ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_
#define ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_

#include <cstdint>
#include <span>
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

// True for inputs that are ready before the step starts: initializers that no optimizer reads and
// outputs of `Constant` nodes. O(users of the value).
bool IsStepConstant(const Value& value);

// IsStepConstant, remembered per initializer. A constant that every gradient's chain reads (the
// unscale factor of mixed-precision training) has a user per parameter: checking its users again
// for every chain would make a pass quadratic in the parameters. Valid while no edit changes
// which optimizers read which initializers.
class StepConstantCache {
 public:
  bool IsStepConstant(const Value& value);

 private:
  // By value id, grown as ids come: a flat table, as a large model has an initializer per
  // parameter and a chain reads several (a hash map's nodes and lookups cost more than the walk).
  enum Known : uint8_t { kUnknown, kConstant, kNotConstant };
  std::vector<Known> known_;
};

// Walks up from `gradient`'s producer. A pass that walks many chains passes one `cache` to all.
GradientChain FindGradientChain(const Value& gradient, StepConstantCache* cache = nullptr);

// FindGradientChain of each gradient, on several threads when there are many: a walk only reads,
// and on a large model (a gradient per parameter) each walk misses the cache a few times.
std::vector<GradientChain> FindGradientChains(std::span<const Value* const> gradients);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_
