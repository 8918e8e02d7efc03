#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_RULE_UTIL_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_RULE_UTIL_H_

// Small helpers shared by the gradient rules of several families.

#include <cstddef>
#include <initializer_list>

#include "passes/autodiff/gradient_rule.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph::autodiff {

// Forward output i, which the gradient needs although it is optional (LayerNormalization's Mean
// and InvStdDev, SoftmaxCrossEntropyLoss's log_prob). When the forward node omits it, the forward
// node runs again as a backward node with every output and `attrs` (the forward's attributes
// that shape inference reads): one fused kernel recomputes it with the forward's own arithmetic.
// `recomputed` keeps that node for the next output a rule asks for.
inline Value* SavedOutput(GradientContext& ctx, size_t i, std::initializer_list<Attr> attrs,
                          Node*& recomputed) {
  if (Value* saved = ctx.output(i)) return saved;
  if (recomputed == nullptr) {
    const Node& forward = ctx.node();
    recomputed = ctx.AddNode({forward.domain(), forward.op_type()}, forward.inputs(),
                             forward.contract()->outputs.size(), attrs);
  }
  return recomputed->output(i);
}

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_RULE_UTIL_H_
