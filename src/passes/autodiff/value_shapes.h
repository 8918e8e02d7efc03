#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_VALUE_SHAPES_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_VALUE_SHAPES_H_

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <unordered_set>
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

// The dtypes a gradient flows through.
inline bool IsFloating(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 ||
         dtype == DataType::kBFloat16 || dtype == DataType::kFloat64;
}

// The static types the gradient rules read, for forward values and the backward values made since.
//
// Shape inference needs every dimension, so a symbolic dimension of a graph input is bound to a
// probe: the graph is inferred twice, with the unknown dims set to distinct primes (7, 11, 13, ...)
// and then to other primes (101, 103, ...); dims of one name (dim_param "batch") share a prime,
// since the model says they are equal. A dim that is the same in both runs does not depend on
// the symbolic ones and is reported exactly; one that differs (batch, batch·seq) is reported as
// TensorType::kUnknownDim. Probes are > 1, so a probed dim is never mistaken for a broadcast 1.
// Both runs are one walk of the schedule; each node added later is inferred when it is made. A node
// that reads the same under both probe sets is inferred once.
class ValueShapes {
 public:
  // Infers every value of `graph` as it is now.
  static StatusOr<ValueShapes> Infer(const Graph& graph);

  // Moved, never copied: a copy's tables would point into this one's pools.
  ValueShapes(ValueShapes&&) = default;
  ValueShapes& operator=(ValueShapes&&) = default;
  ValueShapes(const ValueShapes&) = delete;
  ValueShapes& operator=(const ValueShapes&) = delete;

  // Infers the outputs of `node`, added after Infer (inputs first). A node whose shapes cannot be
  // inferred leaves its outputs without a spec; a shape function's refusal is an error naming it.
  Status InferNode(const Node& node);

  // Records an initializer added after Infer.
  void AddInitializer(const Value& initializer);
  // Binds a graph input added after Infer to a spec per probe set (a label whose dims are the
  // prediction's: the same probes, so the loss's shapes agree).
  void BindInput(const Value& input, TensorSpec probe0, TensorSpec probe1);

  // Recorded type where it has every dim, else the probes' agreement, else what is recorded.
  // The reference stays valid while this object lives.
  const TensorType& type(const Value& value) const;
  // type(value).dtype, without making and keeping the type: the sweep asks it of every value.
  DataType dtype(const Value& value) const;

  // The value's spec under probe set `probe` (0 or 1), or null when unknown.
  const TensorSpec* probed(const Value& value, int probe) const;

 private:
  ValueShapes() = default;
  // Records `value`'s spec under probe set `probe` (nullopt: unknown).
  void Set(const Value& value, int probe, std::optional<TensorSpec> spec);
  // Records the elements of `value`, a small int64 tensor, under probe set `probe`.
  void SetIntValues(const Value& value, int probe, std::vector<int64_t> values);
  // Whether every input of `node` has the same spec and int64 values under both probe sets.
  bool ProbesAgree(const Node& node) const;
  // Gives `value` under probe set 1 what it has under probe set 0.
  void CopyProbe0(const Value& value);
  // Computes the values of `node`'s output when it is a small int64 tensor made from shapes.
  void FoldShapeValues(const Node& node, int probe, std::span<const TensorSpec* const> inputs);
  const std::vector<int64_t>* int_values(const Value& value, int probe) const;

  struct SpecHash {
    size_t operator()(const TensorSpec& spec) const;
  };
  struct TypeHash {
    size_t operator()(const TensorType& type) const;
  };
  struct IntsHash {
    size_t operator()(const std::vector<int64_t>& values) const;
  };
  // Each distinct spec, type and int64 list once, the tables by value id pointing into them: a
  // graph has few distinct shapes, and a heap vector per value and probe cost more to allocate
  // and to free than the rest of the sweep. A node-based set keeps its elements' addresses.
  std::unordered_set<TensorSpec, SpecHash> spec_pool_;
  mutable std::unordered_set<TensorType, TypeHash> type_pool_;
  std::unordered_set<std::vector<int64_t>, IntsHash> ints_pool_;
  // By value id, one table per probe set: the value's spec, or null when unknown.
  std::array<std::vector<const TensorSpec*>, 2> specs_;
  // The values of small int64 tensors known before running, by value id, per probe set (null when
  // unknown): int64 initializers, and what the rules compute from shapes (Shape, Size, then
  // Gather, Concat, Unsqueeze, Squeeze, Reshape, Cast of those), which Reshape's and Expand's
  // shape functions read. As the executor folds them while planning, so shapes follow through
  // them here.
  std::array<std::vector<const std::vector<int64_t>*>, 2> int_values_;
  // type()'s answers by value id, made on first request.
  mutable std::vector<const TensorType*> types_;
};

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_VALUE_SHAPES_H_
