#ifndef ZEROGRAPH_TESTS_PASSES_TOY_TRAINING_GRAPH_H_
#define ZEROGRAPH_TESTS_PASSES_TOY_TRAINING_GRAPH_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {

// A structural training graph for pass tests (its numbers mean nothing):
//
//   forward:   t_i = ReduceSum(p_i); loss = sum of t_i and of ReduceSum(x)
//   backward:  for i = last..0: B_i: p_i.graw = Mul(loss.grad, ones_i); busy_i = Neg(loss.grad)
//   optimizer: per parameter a chain of `chain` post-processing nodes p_i.c1 .. p_i.cK
//              (Mul by a constant, Cast, Identity in turn), then one multi-tensor update.
struct ToyParam {
  std::string name;
  DataType dtype = DataType::kFloat32;
  int64_t numel = 64;
  int chain = 0;
};

struct ToyConfig {
  std::vector<ToyParam> params;
  // AdamW (2 states) or SGD.
  bool adamw = true;
  // Give every node `__op_role` (false: leave roles to inference).
  bool roles = true;
  // Record the types of values inside the graph, as value_info (false: leave them to shape
  // inference; graph inputs, outputs and initializers keep theirs, as ONNX requires).
  bool value_info = true;
};

inline std::unique_ptr<Graph> BuildToyTrainingGraph(const ToyConfig& config) {
  auto graph = std::make_unique<Graph>();
  GraphBuilder b(*graph);
  auto role = [&](OpRole r, bool loss = false) {
    if (config.roles) {
      b.SetRole(r, loss);
    } else {
      b.SetRole(std::nullopt);
    }
  };
  auto set_type = [&](Value* value, DataType dtype, std::vector<int64_t> dims) {
    return config.value_info ? b.SetType(value, dtype, std::move(dims)) : value;
  };
  const DataType f32 = DataType::kFloat32;
  Value* x = b.Input("x", f32, {4});
  Value* lr = b.Input("lr", f32, {});
  Value* step = config.adamw ? b.Input("step", DataType::kInt64, {}) : nullptr;
  std::vector<Value*> params, m1, m2;
  for (const ToyParam& p : config.params) {
    params.push_back(b.Zeros(p.name, p.dtype, {p.numel}));
    if (config.adamw) {
      m1.push_back(b.Zeros(p.name + ".m1", p.dtype, {p.numel}));
      m2.push_back(b.Zeros(p.name + ".m2", p.dtype, {p.numel}));
    }
  }
  std::vector<float> one = {1.0f};
  Value* scale = b.Initializer("grad_scale", {1}, one);

  role(OpRole::kForward);
  Value* acc = b.Op("ReduceSum", {x}, "x.sum", {Attr("keepdims", 0)});
  for (size_t i = 0; i < params.size(); ++i) {
    Value* t =
        b.Op("ReduceSum", {params[i]}, config.params[i].name + ".sum", {Attr("keepdims", 0)});
    acc = b.Op("Add", {acc, t}, StrCat("acc", i));
  }
  role(OpRole::kForward, /*loss=*/true);
  Value* loss = b.SetType(b.Op("Identity", {acc}, "loss"), f32, {});

  role(OpRole::kBackward);
  Value* loss_grad = b.Op("Identity", {loss}, "loss.grad");
  std::vector<Value*> grads(params.size());
  for (size_t i = params.size(); i-- > 0;) {
    const ToyParam& p = config.params[i];
    // A constant broadcast, so that B_i has one dynamic input and changes its shape.
    Value* ones = b.Initializer(p.name + ".ones", {p.numel},
                                std::vector<float>(static_cast<size_t>(p.numel), 1.0f));
    Value* raw = b.Op("Mul", {loss_grad, ones}, p.name + ".graw");
    if (p.dtype != f32) raw = b.Op("Cast", {raw}, p.name + ".graw16", {Attr("to", int(p.dtype))});
    set_type(raw, p.dtype, {p.numel});
    grads[i] = raw;
    b.Op("Neg", {loss_grad}, StrCat("busy", i));
  }
  role(OpRole::kOptimize);
  for (size_t i = 0; i < params.size(); ++i) {
    const ToyParam& p = config.params[i];
    for (int c = 1; c <= p.chain; ++c) {
      std::string name = StrCat(p.name, ".c", c);
      switch (c % 3) {
        case 1:
          grads[i] = b.Op("Mul", {grads[i], scale}, name);
          break;
        case 2:
          grads[i] = b.Op("Cast", {grads[i]}, name, {Attr("to", int(p.dtype))});
          break;
        default:
          grads[i] = b.Op("Identity", {grads[i]}, name);
      }
      set_type(grads[i], p.dtype, {p.numel});
    }
  }
  std::vector<Value*> inputs = {lr};
  if (step != nullptr) inputs.push_back(step);
  inputs.insert(inputs.end(), params.begin(), params.end());
  inputs.insert(inputs.end(), grads.begin(), grads.end());
  inputs.insert(inputs.end(), m1.begin(), m1.end());
  inputs.insert(inputs.end(), m2.begin(), m2.end());
  std::vector<std::string> outputs;
  for (const ToyParam& p : config.params) outputs.push_back(p.name + ".new");
  if (config.adamw) {
    for (const ToyParam& p : config.params) outputs.push_back(p.name + ".m1.new");
    for (const ToyParam& p : config.params) outputs.push_back(p.name + ".m2.new");
  }
  Node* update = b.AddNode({kZerographDomain, config.adamw ? "AdamW" : "SGD"}, inputs, outputs);
  b.Output(loss);
  TrainingSpec spec;
  spec.loss = "loss";
  spec.data_inputs = {"x"};
  spec.lr_input = "lr";
  if (step != nullptr) spec.step_input = "step";
  for (size_t o = 0; o < update->num_outputs(); ++o) {
    Value* out = update->output(o);
    const std::string& name = outputs[o];
    b.SetType(out, config.params[o % params.size()].dtype,
              {config.params[o % params.size()].numel});
    b.Output(out);
    spec.state_binding.emplace_back(name, name.substr(0, name.size() - 4));
  }
  WriteTrainingSpec(spec, *graph);
  return graph;
}

}  // namespace zerograph

#endif  // ZEROGRAPH_TESTS_PASSES_TOY_TRAINING_GRAPH_H_
