#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_GRADIENT_RULE_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_GRADIENT_RULE_H_

// The contract between the reverse sweep (autodiff.cc) and the per-op gradient rules
// (rules_*.cc). A rule sees one forward node, the gradients flowing into its outputs, and which
// inputs need a gradient; it appends backward nodes and records the gradient of each input that
// needs one. The sweep sums the gradients of a value used several times, so a rule never does.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/tensor_type.h"

namespace zerograph {
class Node;
class Value;
}  // namespace zerograph

namespace zerograph::autodiff {

class GradientContext {
 public:
  virtual ~GradientContext() = default;

  const Node& node() const { return node_; }
  // The forward node's input i / output i (nullptr for an omitted optional one).
  Value* input(size_t i) const;
  Value* output(size_t i) const;

  // dL/d output i, or nullptr when no gradient reaches that output (a LayerNormalization's mean,
  // an output nothing on the loss path reads).
  virtual Value* output_grad(size_t i) const = 0;
  // Whether input i needs a gradient: it is floating and lies on a path from a trained parameter.
  virtual bool needs_grad(size_t i) const = 0;
  // Records dL/d input i. Must have input i's shape (use ReduceToShapeOf after a broadcast).
  virtual Status SetInputGrad(size_t i, Value* grad) = 0;

  // What is known statically of a forward value: dtype and dims, a symbolic or unknown dim as
  // TensorType::kUnknownDim. Symbolic dims are probed with values > 1 where shape inference needs
  // them, so dims are exact where they are static and rank is always known for values on the
  // loss path.
  virtual const TensorType& type(const Value& value) const = 0;
  // The graph's opset of ONNX's default domain, which says the form of backward ops (ReduceSum,
  // Unsqueeze and Squeeze take their axes as an input from 13 on, as an attribute before).
  virtual int64_t opset() const = 0;
  int64_t rank(const Value& value) const {
    return static_cast<int64_t>(type(value).dims ? type(value).dims->size() : 0);
  }

  // Backward nodes: role backward, named after the forward node. Op returns its one output.
  virtual Value* Op(OpName op, std::initializer_list<Value*> inputs,
                    std::initializer_list<Attr> attrs = {}) = 0;
  virtual Node* AddNode(OpName op, std::span<Value* const> inputs, size_t num_outputs,
                        std::initializer_list<Attr> attrs = {}) = 0;
  // Constants (initializers shared across the graph, one per distinct value).
  virtual Value* Int64s(std::span<const int64_t> values) = 0;  // 1-D int64
  Value* Int64s(std::initializer_list<int64_t> values) {
    return Int64s(std::span<const int64_t>(values.begin(), values.size()));
  }
  virtual Value* Scalar(float value, DataType dtype) = 0;  // 0-D of `dtype`

  // Sums `grad` (of the broadcast result's shape) back to the shape of `like`, the operand that
  // was broadcast: a no-op when the shapes are statically equal, a ReduceSum over static axes
  // when the ranks and 1-dims say which, else a dynamic reduction (Shape → ReduceSum → Reshape).
  virtual Value* ReduceToShapeOf(Value* grad, const Value& like) = 0;

 protected:
  explicit GradientContext(const Node& node) : node_(node) {}

 private:
  const Node& node_;
};

// Appends the backward of one forward node. Errors name the node (the sweep adds the context).
using GradientRule = Status (*)(GradientContext& ctx);

struct GradientRuleEntry {
  std::string_view domain;  // "" for ONNX's default domain
  std::string_view op_type;
  GradientRule rule;
};

// Each family file defines one of these; gradient_rules.cc collects them into one table.
std::span<const GradientRuleEntry> LinearAlgebraGradientRules();  // rules_linear_algebra.cc
std::span<const GradientRuleEntry> ElementwiseGradientRules();    // rules_elementwise.cc
std::span<const GradientRuleEntry> ShapeGradientRules();          // rules_shape.cc
std::span<const GradientRuleEntry> NormalizationGradientRules();  // rules_normalization.cc
std::span<const GradientRuleEntry> ReductionLossGradientRules();  // rules_reduction_loss.cc

// The rule for an op, or nullptr when it has none (the sweep then reports the node: exit 2).
GradientRule FindGradientRule(std::string_view domain, std::string_view op_type);

// Ops whose outputs never carry a gradient (Shape, Size, comparisons, ArgMax, ...): the sweep
// stops at them instead of asking for a rule.
bool IsNonDifferentiable(std::string_view domain, std::string_view op_type);

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_GRADIENT_RULE_H_
