#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_VALUE_SHAPES_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_VALUE_SHAPES_H_

#include <array>
#include <deque>
#include <optional>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/tensor_spec.h"
#include "zerograph/ir/tensor_type.h"

namespace zerograph {
class Graph;
class Node;
class Value;
}  // namespace zerograph

namespace zerograph::autodiff {

// The static types the gradient rules read, for forward values and the backward values made since.
//
// Shape inference needs every dimension, so a symbolic dimension of a graph input is bound to a
// probe: the graph is inferred twice, with the unknown dims set to distinct primes (7, 11, 13, ...)
// and then to other primes (101, 103, ...). A dim that is the same in both runs does not depend on
// the symbolic ones and is reported exactly; one that differs (batch, batch·seq) is reported as
// TensorType::kUnknownDim. Probes are > 1, so a probed dim is never mistaken for a broadcast 1.
// Both runs are one walk of the schedule; each node added later is inferred once when it is made.
class ValueShapes {
 public:
  // Infers every value of `graph` as it is now.
  static StatusOr<ValueShapes> Infer(const Graph& graph);

  // Infers the outputs of `node`, added after Infer (inputs first). A node whose shapes cannot be
  // inferred leaves its outputs without a spec; a shape function's refusal is an error naming it.
  Status InferNode(const Node& node);

  // Records an initializer added after Infer.
  void AddInitializer(const Value& initializer);

  // Recorded type where it has every dim, else the probes' agreement, else what is recorded.
  // The reference stays valid while this object lives.
  const TensorType& type(const Value& value) const;

  // The value's spec under probe set `probe` (0 or 1), or null when unknown.
  const TensorSpec* probed(const Value& value, int probe) const;

 private:
  ValueShapes() = default;
  std::optional<TensorSpec>& slot(const Value& value, int probe);

  // By value id, one table per probe set.
  std::array<std::vector<std::optional<TensorSpec>>, 2> specs_;
  // type()'s answers by value id, made on first request; a deque keeps references stable.
  mutable std::deque<std::optional<TensorType>> types_;
};

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_VALUE_SHAPES_H_
