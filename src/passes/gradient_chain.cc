#include "zerograph/passes/gradient_chain.h"

#include <algorithm>

#include "core/parallelism.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

// A thread walking chains pays for its start from this many gradients on.
constexpr size_t kGradientsPerThread = 4'000;

}  // namespace

bool IsStepConstant(const Value& value) {
  if (value.initializer() != nullptr) {
    for (const Use& use : value.users()) {
      if (FindOptimizerSignature(*use.node)) return false;
    }
    return true;
  }
  return value.producer() != nullptr && value.producer()->Is("", "Constant");
}

bool StepConstantCache::IsStepConstant(const Value& value) {
  // Only initializers cost a scan of their users.
  if (value.initializer() == nullptr) return zerograph::IsStepConstant(value);
  const auto id = static_cast<size_t>(value.id());
  if (id >= known_.size()) known_.resize(std::max(id + 1, 2 * known_.size()), kUnknown);
  if (known_[id] == kUnknown) {
    known_[id] = zerograph::IsStepConstant(value) ? kConstant : kNotConstant;
  }
  return known_[id] == kConstant;
}

GradientChain FindGradientChain(const Value& gradient, StepConstantCache* cache) {
  GradientChain result;
  Node* node = gradient.producer();
  while (node != nullptr) {
    if (node->role() == OpRole::kBackward) {
      result.backward_op = node;
      return result;
    }
    const Value* dynamic = nullptr;
    int dynamic_inputs = 0;
    for (const Value* input : node->inputs()) {
      if (input == nullptr) continue;
      if (cache != nullptr ? cache->IsStepConstant(*input) : IsStepConstant(*input)) continue;
      dynamic = input;
      ++dynamic_inputs;
    }
    if (dynamic_inputs != 1) {
      result.stop_reason = StrCat("node '", node->name(), "' (", node->op_type(), ") has ",
                                  dynamic_inputs, " dynamic inputs");
      result.chain.clear();
      return result;
    }
    result.chain.push_back(node);
    node = dynamic->producer();
  }
  result.stop_reason =
      StrCat("the chain above '", gradient.name(), "' reaches a graph input or initializer");
  result.chain.clear();
  return result;
}

std::vector<GradientChain> FindGradientChains(std::span<const Value* const> gradients) {
  std::vector<GradientChain> chains(gradients.size());
  auto walk = [&](size_t part, size_t parts) {
    StepConstantCache cache;  // per thread: it is written as it learns
    const size_t end = gradients.size() * (part + 1) / parts;
    for (size_t i = gradients.size() * part / parts; i < end; ++i) {
      chains[i] = FindGradientChain(*gradients[i], &cache);
    }
  };
  const int threads = ThreadsFor(gradients.size(), kGradientsPerThread);
  const auto parts = static_cast<size_t>(threads);
  const Status walked = ParallelFor(parts, threads, [&](size_t part) {
    walk(part, parts);
    return Status::Ok();
  });
  ZG_CHECK(walked.ok(), "a gradient chain walk cannot fail: ", walked.ToString());
  return chains;
}

}  // namespace zerograph
