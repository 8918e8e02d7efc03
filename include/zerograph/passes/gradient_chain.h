#ifndef ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_
#define ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

// A chain where another object keeps it: a GradientChain, or a chain a GradientChainHandoff
// holds (a pass that takes a chain per parameter then makes no copy of each).
struct GradientChainView {
  Node* backward_op = nullptr;
  std::span<Node* const> chain;
  std::string_view stop_reason;

  GradientChainView() = default;
  GradientChainView(Node* backward, std::span<Node* const> nodes, std::string_view reason = {})
      : backward_op(backward), chain(nodes), stop_reason(reason) {}
  explicit GradientChainView(const GradientChain& found)
      : GradientChainView(found.backward_op, found.chain, found.stop_reason) {}
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

// Chains one pass found, for a later pass that needs the same ones: sharding-stage1 walks every
// gradient's chain to learn where the gradient is ready, and overlap moves those chains. Taken in
// the order they were put; asked in another order or for another gradient, it has no answer and
// the asker walks the chain itself (as for a chain that stopped, whose reason it reports). Valid
// while the edits between the passes change no chain: sharding-stage1 adds and erases nodes only
// after the gradients, where the optimizer reads them, and replaces parameters by views, which are
// as dynamic as the parameters were.
class GradientChainHandoff {
 public:
  void Reserve(size_t more_chains, size_t more_nodes) {
    found_.reserve(found_.size() + more_chains);
    nodes_.reserve(nodes_.size() + more_nodes);
  }
  // The next chain: from `gradient` to `backward_op`, or, null, not known.
  void Put(const Value* gradient, Node* backward_op, std::span<Node* const> chain) {
    const auto begin = static_cast<uint32_t>(nodes_.size());
    nodes_.insert(nodes_.end(), chain.begin(), chain.end());
    found_.push_back({gradient, backward_op, begin, static_cast<uint32_t>(nodes_.size())});
  }
  // The `index`-th chain when it is known and was put for `gradient`, valid until Clear.
  std::optional<GradientChainView> Take(size_t index, const Value* gradient) const {
    if (index >= found_.size()) return std::nullopt;
    const Found& found = found_[index];
    if (found.gradient != gradient || found.backward_op == nullptr) return std::nullopt;
    return GradientChainView(found.backward_op,
                             std::span(nodes_).subspan(found.begin, found.end - found.begin));
  }
  void Clear() {
    found_ = {};
    nodes_ = {};
  }

 private:
  // A handoff holds a chain per parameter of a large model: their nodes in one list, no reasons.
  struct Found {
    const Value* gradient;
    Node* backward_op;
    uint32_t begin, end;  // in nodes_
  };
  std::vector<Found> found_;
  std::vector<Node*> nodes_;
};

// Walks up from `gradient`'s producer. A pass that walks many chains passes one `cache` to all.
GradientChain FindGradientChain(const Value& gradient, StepConstantCache* cache = nullptr);

// FindGradientChain of each gradient, on several threads when there are many: a walk only reads,
// and on a large model (a gradient per parameter) each walk misses the cache a few times.
std::vector<GradientChain> FindGradientChains(std::span<const Value* const> gradients);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_GRADIENT_CHAIN_H_
