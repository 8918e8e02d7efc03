#ifndef ZEROGRAPH_SRC_PASSES_AUTODIFF_GRADIENT_CONTEXT_H_
#define ZEROGRAPH_SRC_PASSES_AUTODIFF_GRADIENT_CONTEXT_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "passes/autodiff/gradient_rule.h"
#include "passes/autodiff/value_shapes.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"

namespace zerograph::autodiff {

// What the reverse sweep keeps while it appends the backward of one graph: the types of values,
// the constants made so far (one initializer per distinct value), which values need a gradient,
// and the gradients each value has received. Rules reach it through a NodeGradientContext.
class BackwardBuilder {
 public:
  // `needs_grad[value id]`: the value is floating and lies between a trained value and the loss.
  BackwardBuilder(Graph& graph, ValueShapes shapes, std::vector<bool> needs_grad);

  Graph& graph() const { return graph_; }
  int64_t opset() const { return graph_.OpsetVersion("").value_or(1); }
  const TensorType& type(const Value& value) const { return shapes_.type(value); }
  bool needs_grad(const Value& value) const {
    const auto id = static_cast<size_t>(value.id());
    return id < needs_grad_.size() && needs_grad_[id];
  }

  // A backward node at the end of the schedule, named after `forward` (the node whose gradient
  // it computes). A backward node whose shapes its op refuses is a rule's bug: the error is kept
  // for TakeError.
  Node* AddNode(const Node& forward, OpName op, std::span<Value* const> inputs, size_t num_outputs,
                std::initializer_list<Attr> attrs);
  Value* Int64s(std::span<const int64_t> values);
  Value* Scalar(float value, DataType dtype);
  Value* ReduceToShapeOf(const Node& forward, Value* grad, const Value& like);

  // Adds `grad`, from `source` (for errors: "the gradient rule of node 'X' (Op)"), to the
  // gradients `value` received; checks its dtype and shape against `value`'s.
  Status AddGradient(std::string_view source, const Value& value, Value* grad);
  // dL/d`value`: the one gradient it received, or their sum (one Sum node, made on the first
  // call), or null when none reached it. Call once every user of `value` has been swept.
  Value* TakeGradient(const Value& value);
  // The first error of a node made since the last call, or OK.
  Status TakeError();

 private:
  Value* Constant(DataType dtype, std::span<const int64_t> dims, std::string bytes);
  // Sums `grad` over the axes the probed shapes say were broadcast, or nullptr when they cannot
  // tell (a dim of `like` that is unknown in one probe).
  Value* StaticReduceToShapeOf(const Node& forward, Value* grad, const Value& like);
  Value* DynamicReduceToShapeOf(const Node& forward, Value* grad, const Value& like);

  Graph& graph_;
  ValueShapes shapes_;
  std::vector<bool> needs_grad_;
  // By value id, the first gradient received, and the others for the few values read several
  // times: one table for all, not a list per value.
  std::vector<Value*> gradient_;
  std::unordered_map<int64_t, std::vector<Value*>> more_gradients_;
  // Constants by dtype, dims and bytes.
  std::unordered_map<std::string, Value*> constants_;
  Status error_;
};

// The GradientContext a rule sees for one forward node.
class NodeGradientContext final : public GradientContext {
 public:
  // `output_grads[i]`: dL/d output i, or null.
  NodeGradientContext(const Node& node, BackwardBuilder& builder, std::vector<Value*> output_grads)
      : GradientContext(node), builder_(builder), output_grads_(std::move(output_grads)) {}

  Value* output_grad(size_t i) const override {
    return i < output_grads_.size() ? output_grads_[i] : nullptr;
  }
  bool needs_grad(size_t i) const override;
  Status SetInputGrad(size_t i, Value* grad) override;
  const TensorType& type(const Value& value) const override { return builder_.type(value); }
  int64_t opset() const override { return builder_.opset(); }
  Value* Op(OpName op, std::initializer_list<Value*> inputs,
            std::initializer_list<Attr> attrs = {}) override;
  Node* AddNode(OpName op, std::span<Value* const> inputs, size_t num_outputs,
                std::initializer_list<Attr> attrs = {}) override {
    return builder_.AddNode(node(), op, inputs, num_outputs, attrs);
  }
  Value* Int64s(std::span<const int64_t> values) override { return builder_.Int64s(values); }
  using GradientContext::Int64s;
  Value* Scalar(float value, DataType dtype) override { return builder_.Scalar(value, dtype); }
  Value* ReduceToShapeOf(Value* grad, const Value& like) override {
    return builder_.ReduceToShapeOf(node(), grad, like);
  }

 private:
  BackwardBuilder& builder_;
  std::vector<Value*> output_grads_;
};

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_SRC_PASSES_AUTODIFF_GRADIENT_CONTEXT_H_
