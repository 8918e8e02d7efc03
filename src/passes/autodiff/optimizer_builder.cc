#include "passes/autodiff/optimizer_builder.h"

#include <cstddef>
#include <cstring>
#include <string>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

using Optimizer = AutodiffPass::Optimizer;

std::vector<int64_t> DimsOf(const Value& initializer) {
  std::span<const int64_t> dims = initializer.initializer()->dims();
  return {dims.begin(), dims.end()};
}

// A 0-D constant of `dtype` holding `value`, for the L2 term (float32 and float64 exactly; other
// dtypes through a Cast).
Value* ScalarLike(GraphBuilder& b, float value, DataType dtype) {
  const float values[] = {value};
  Value* scalar = b.Initializer(b.graph().UniqueValueName("weight_decay"), {}, values);
  if (dtype == DataType::kFloat32) return scalar;
  return b.Op("Cast", {scalar}, "weight_decay_cast", {Attr("to", static_cast<int64_t>(dtype))});
}

}  // namespace

AppendedOptimizer AppendOptimizer(Graph& graph, std::span<const TrainedParameter> params,
                                  const AutodiffPass::Options& options) {
  GraphBuilder b(graph);
  AppendedOptimizer result;
  const bool adam = options.optimizer != Optimizer::kSgd;
  const float weight_decay =
      options.weight_decay.value_or(options.optimizer == Optimizer::kAdamW ? 0.01f : 0.0f);
  result.lr = b.Input("lr", DataType::kFloat32, {});
  if (adam) result.step = b.Input("step", DataType::kInt64, {});

  // L2 weight decay (Adam, SGD): g ← g + wd·param, as PyTorch's optimizers add it.
  // Sized once: the node of a large model has millions of inputs, and each regrowth of a vector
  // that size frees a large block, which makes glibc's malloc consolidate every small free chunk.
  const size_t per_param = adam ? 3 : 1;
  std::vector<Value*> grads;
  grads.reserve(params.size());
  b.SetRole(OpRole::kBackward);
  for (const TrainedParameter& p : params) {
    Value* grad = p.grad;
    if (options.optimizer != Optimizer::kAdamW && weight_decay != 0.0f) {
      Value* decay = ScalarLike(b, weight_decay, p.param->dtype());
      grad = b.Op("Add", {grad, b.Op("Mul", {p.param, decay}, StrCat(p.param->name(), ".l2"))},
                  StrCat(p.param->name(), ".grad.l2"));
    }
    grads.push_back(grad);
  }

  std::vector<Value*> inputs = {result.lr};
  inputs.reserve(2 + (per_param + 1) * params.size());
  if (adam) inputs.push_back(result.step);
  std::vector<std::string> outputs;
  outputs.reserve(per_param * params.size());
  std::vector<Value*> replaced;
  replaced.reserve(per_param * params.size());
  result.binding.reserve(per_param * params.size());
  for (const TrainedParameter& p : params) {
    inputs.push_back(p.param);
    outputs.push_back(StrCat(p.param->name(), ".new"));
    replaced.push_back(p.param);
  }
  inputs.insert(inputs.end(), grads.begin(), grads.end());
  if (adam) {
    for (const char* suffix : {".m1", ".m2"}) {
      for (const TrainedParameter& p : params) {
        Value* state = b.Zeros(StrCat(p.param->name(), suffix), p.param->dtype(), DimsOf(*p.param));
        inputs.push_back(state);
        outputs.push_back(StrCat(state->name(), ".new"));
        replaced.push_back(state);
      }
    }
  }

  b.SetRole(OpRole::kOptimize);
  Node* update = nullptr;
  if (adam) {
    update = b.AddNode(
        {kZerographDomain, "AdamW"}, inputs, outputs,
        {Attr("beta1", options.beta1), Attr("beta2", options.beta2),
         Attr("epsilon", options.epsilon),
         Attr("weight_decay", options.optimizer == Optimizer::kAdamW ? weight_decay : 0.0f)});
    // Written only when not the op's defaults, so a graph of PyTorch's AdamW reads as before.
    if (options.adam_mode != 0) update->SetInt("adam_mode", options.adam_mode);
    if (!options.bias_correction) update->SetInt("correct_bias", 0);
  } else {
    update = b.AddNode({kZerographDomain, "SGD"}, inputs, outputs);
  }
  for (size_t k = 0; k < update->num_outputs(); ++k) {
    Value* new_value = update->output(k);
    graph.SetValueType(new_value, *replaced[k]->type());
    result.binding.emplace_back(new_value, replaced[k]);
  }
  return result;
}

}  // namespace zerograph::autodiff
