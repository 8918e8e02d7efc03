#ifndef ZEROGRAPH_PASSES_AUTODIFF_H_
#define ZEROGRAPH_PASSES_AUTODIFF_H_

#include <span>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph {

class Graph;
class Value;

// Reverse-mode differentiation of a graph: appends, at the end of the schedule and with role
// backward, the nodes computing d`loss`/dv for each v in `wrt`, and returns those gradients in
// `wrt`'s order (null for a value the loss does not depend on, or only through integers and ops
// without a gradient).
//
// One sweep, linear in the graph: the nodes both downstream of `wrt` and upstream of `loss` are
// visited once in reverse schedule order, each through its op's gradient rule
// (src/passes/autodiff/gradient_rule.h); the gradients of a value read several times are summed
// with one Sum node. `loss` must be a floating scalar; its gradient is seeded with 1.
// InvalidArgument names a node on the path whose op has no gradient rule.
StatusOr<std::vector<Value*>> AppendBackward(Graph& graph, Value* loss,
                                             std::span<Value* const> wrt);

// The same for several outputs at once, each seeded with the given gradient (of its dtype and
// shape) instead of 1: the gradients of Σ_i Σ(outputs[i] ⊙ output_grads[i]), a vector-Jacobian
// product. The gradient check uses it to differentiate a graph's outputs as they are.
StatusOr<std::vector<Value*>> AppendBackward(Graph& graph, std::span<Value* const> outputs,
                                             std::span<Value* const> output_grads,
                                             std::span<Value* const> wrt);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_AUTODIFF_H_
