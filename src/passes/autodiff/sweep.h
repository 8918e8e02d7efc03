#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_SWEEP_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_SWEEP_H_

#include <span>
#include <vector>

#include "passes/autodiff/value_shapes.h"
#include "zerograph/core/status.h"

namespace zerograph {
class Graph;
class Value;
}  // namespace zerograph

namespace zerograph::autodiff {

// AppendBackward (zerograph/passes/autodiff.h) over `shapes`, which the caller inferred and
// completed: the autodiff pass binds the label it adds to the prediction's probed dims.
// `output_grads[i]` null seeds outputs[i] with the scalar 1.
StatusOr<std::vector<Value*>> SweepBackward(Graph& graph, ValueShapes shapes,
                                            std::span<Value* const> outputs,
                                            std::span<Value* const> output_grads,
                                            std::span<Value* const> wrt);

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_SWEEP_H_
