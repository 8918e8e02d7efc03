#include "zerograph/passes/autodiff.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "passes/autodiff/gradient_context.h"
#include "passes/autodiff/gradient_rule.h"
#include "passes/autodiff/sweep.h"
#include "passes/autodiff/value_shapes.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

std::string OpLabel(const Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx"
             ? std::string(node.op_type())
             : StrCat(node.domain(), ".", node.op_type());
}

// The values that carry a gradient from `wrt` to `loss`, and the nodes between them in schedule
// order: a value does when it is floating, downstream of `wrt` through differentiable ops, and
// upstream of the loss. Two walks of the schedule, one each way.
struct Path {
  std::vector<bool> carries;  // by value id
  std::vector<Node*> nodes;   // schedule order
};

Path FindPath(const Graph& graph, const autodiff::ValueShapes& shapes,
              std::span<Value* const> outputs, std::span<Value* const> wrt) {
  const auto bound = static_cast<size_t>(graph.value_id_bound());
  // A value of unknown dtype (the output of an op zerograph does not know) may carry a gradient:
  // the path then reaches its node, which has no rule, and the error names it.
  auto floating = [&](const Value& v) {
    const DataType dtype = shapes.dtype(v);
    return autodiff::IsFloating(dtype) || dtype == DataType::kUndefined;
  };
  std::vector<bool> downstream(bound);
  for (const Value* v : wrt) downstream[static_cast<size_t>(v->id())] = floating(*v);
  std::vector<Node*> reached;
  for (Node* node : graph.nodes()) {
    bool from_wrt = false;
    for (const Value* input : node->inputs()) {
      from_wrt = from_wrt || (input != nullptr && downstream[static_cast<size_t>(input->id())]);
    }
    if (!from_wrt || autodiff::IsNonDifferentiable(node->domain(), node->op_type())) continue;
    reached.push_back(node);
    for (const Value* output : node->outputs()) {
      if (output != nullptr) downstream[static_cast<size_t>(output->id())] = floating(*output);
    }
  }
  // Upstream of the outputs, among the reached values only.
  Path path;
  path.carries.resize(bound);
  for (const Value* v : outputs) {
    path.carries[static_cast<size_t>(v->id())] = downstream[static_cast<size_t>(v->id())];
  }
  for (auto it = reached.rbegin(); it != reached.rend(); ++it) {
    Node* node = *it;
    bool to_loss = false;
    for (const Value* output : node->outputs()) {
      to_loss = to_loss || (output != nullptr && path.carries[static_cast<size_t>(output->id())]);
    }
    if (!to_loss) continue;
    path.nodes.push_back(node);
    for (const Value* input : node->inputs()) {
      if (input != nullptr && downstream[static_cast<size_t>(input->id())]) {
        path.carries[static_cast<size_t>(input->id())] = true;
      }
    }
  }
  std::reverse(path.nodes.begin(), path.nodes.end());
  return path;
}

}  // namespace

namespace autodiff {

StatusOr<std::vector<Value*>> SweepBackward(Graph& graph, ValueShapes shapes,
                                            std::span<Value* const> outputs,
                                            std::span<Value* const> output_grads,
                                            std::span<Value* const> wrt) {
  Path path = FindPath(graph, shapes, outputs, wrt);
  // Every rule is found before the first backward node is added: a refusal changes nothing.
  std::vector<autodiff::GradientRule> rules;
  rules.reserve(path.nodes.size());
  for (const Node* node : path.nodes) {
    rules.push_back(autodiff::FindGradientRule(node->domain(), node->op_type()));
    ZG_RETURN_IF_NOT(rules.back() != nullptr, "node '", node->name(), "' (", OpLabel(*node),
                     ") is on the path to the loss and has no gradient rule");
  }
  autodiff::BackwardBuilder builder(graph, std::move(shapes), std::move(path.carries));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!builder.needs_grad(*outputs[i])) continue;
    Value* seed = output_grads[i] != nullptr
                      ? output_grads[i]
                      : builder.Scalar(1.0f, builder.type(*outputs[i]).dtype);
    ZG_RETURN_IF_ERROR(builder.AddGradient("the seed", *outputs[i], seed));
  }
  std::vector<Value*> grads_out;
  for (size_t n = path.nodes.size(); n-- > 0;) {
    const Node& node = *path.nodes[n];
    grads_out.assign(node.num_outputs(), nullptr);
    bool any = false;
    for (size_t o = 0; o < node.num_outputs(); ++o) {
      const Value* output = node.output(o);
      if (output == nullptr || !builder.needs_grad(*output)) continue;
      grads_out[o] = builder.TakeGradient(*output);
      any = any || grads_out[o] != nullptr;
    }
    if (!any) continue;
    autodiff::NodeGradientContext context(node, builder, std::move(grads_out));
    Status applied = rules[n](context);
    if (applied.ok()) applied = builder.TakeError();
    if (!applied.ok()) {
      return std::move(applied).WithContext(
          StrCat("gradient of node '", node.name(), "' (", OpLabel(node), ")"));
    }
  }
  std::vector<Value*> grads(wrt.size());
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (builder.needs_grad(*wrt[i])) grads[i] = builder.TakeGradient(*wrt[i]);
  }
  ZG_RETURN_IF_ERROR(builder.TakeError());
  return grads;
}

}  // namespace autodiff

StatusOr<std::vector<Value*>> AppendBackward(Graph& graph, Value* loss,
                                             std::span<Value* const> wrt) {
  ZG_ASSIGN_OR_RETURN(autodiff::ValueShapes shapes, autodiff::ValueShapes::Infer(graph));
  const TensorType& loss_type = shapes.type(*loss);
  ZG_RETURN_IF_NOT(
      autodiff::IsFloating(loss_type.dtype) && loss_type.dims && loss_type.dims->empty(),
      "the loss '", loss->name(), "' must be a floating scalar, not ", loss_type.ToString());
  Value* const outputs[] = {loss};
  Value* const seeds[] = {nullptr};
  return autodiff::SweepBackward(graph, std::move(shapes), outputs, seeds, wrt);
}

StatusOr<std::vector<Value*>> AppendBackward(Graph& graph, std::span<Value* const> outputs,
                                             std::span<Value* const> output_grads,
                                             std::span<Value* const> wrt) {
  ZG_RET_CHECK(outputs.size() == output_grads.size(), outputs.size(), " outputs but ",
               output_grads.size(), " output gradients");
  ZG_ASSIGN_OR_RETURN(autodiff::ValueShapes shapes, autodiff::ValueShapes::Infer(graph));
  return autodiff::SweepBackward(graph, std::move(shapes), outputs, output_grads, wrt);
}

}  // namespace zerograph
