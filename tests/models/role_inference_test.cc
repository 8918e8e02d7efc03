#include "zerograph/ir/role_inference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;
constexpr int64_t kForward = 0;
constexpr int64_t kBackward = 1;
constexpr int64_t kOptimize = 2;
constexpr int64_t kLoss = kLossRoleBit;

// Builds graphs without `__op_role` and infers their roles.
class RoleInferenceTest : public ::testing::Test {
 protected:
  // Forward x -> p = x w -> d = p - y -> sq -> loss, and the weight gradient g = x^T d. Tests add
  // the post-processing and the optimizer.
  void SetUp() override {
    b_.SetRole(std::nullopt);
    x_ = b_.Input("x", kF32, {2, 3});
    Value* y = b_.Input("y", kF32, {2, 3});
    lr_ = b_.Input("lr", kF32, {});
    step_ = b_.Input("step", DataType::kInt64, {});
    const std::vector<float> init(9, 0.5f);
    w_ = b_.Initializer("w", {3, 3}, init);
    Value* p = b_.Op("MatMul", {x_, w_}, "p");
    Value* d = b_.Op("Sub", {p, y}, "d");
    Value* sq = b_.Op("Mul", {d, d}, "sq");
    loss_ = b_.Op("ReduceMean", {sq}, "loss", {Attr("keepdims", 0)});
    grad_ = b_.SetType(b_.Op("Gemm", {x_, d}, "w.grad", {Attr("transA", 1)}), kF32, {3, 3});
    graph_.AddOutput(loss_);
    spec_.loss = "loss";
  }

  // The inferred role bits by node name.
  std::map<std::string, int64_t> Infer() {
    StatusOr<std::vector<int64_t>> roles = InferRoleBits(graph_, spec_);
    EXPECT_TRUE(roles.ok()) << roles.status().ToString();
    std::map<std::string, int64_t> by_output;
    if (!roles.ok()) return by_output;
    for (const Node* node : graph_.nodes()) {
      by_output[std::string(node->output(0)->name())] = (*roles)[node->id()];
    }
    return by_output;
  }

  Graph graph_;
  GraphBuilder b_{graph_};
  TrainingSpec spec_;
  Value* x_ = nullptr;
  Value* lr_ = nullptr;
  Value* step_ = nullptr;
  Value* w_ = nullptr;
  Value* loss_ = nullptr;
  Value* grad_ = nullptr;
};

// The loss and its ancestors are forward, the loss with the loss bit; the gradient is backward; the
// optimizer is optimizer.
TEST_F(RoleInferenceTest, ForwardBackwardOptimizer) {
  Value* w_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w_, grad_}, "w.new");
  graph_.AddOutput(w_new);
  std::map<std::string, int64_t> roles = Infer();
  EXPECT_EQ(roles["p"], kForward);
  EXPECT_EQ(roles["d"], kForward);
  EXPECT_EQ(roles["sq"], kForward);
  EXPECT_EQ(roles["loss"], kForward | kLoss);
  EXPECT_EQ(roles["w.grad"], kBackward);
  EXPECT_EQ(roles["w.new"], kOptimize);
}

// Casts and scales by a constant between gradient and optimizer are gradient post-processing: a
// chain of them is optimizer, walking back from the update.
TEST_F(RoleInferenceTest, SingleInputChainIntoOptimizerIsOptimizer) {
  Value* half = b_.Op("Constant", {}, "half", {Attr("value_float", 0.5f)});
  const std::vector<float> two = {2.0f};
  Value* scale = b_.Initializer("scale", {1}, two);
  Value* g1 = b_.SetType(b_.Op("Mul", {grad_, half}, "g1"), kF32, {3, 3});
  Value* g2 = b_.SetType(b_.Op("Mul", {scale, g1}, "g2"), kF32, {3, 3});
  Value* g3 = b_.SetType(b_.Op("Cast", {g2}, "g3", {Attr("to", 1)}), kF32, {3, 3});
  Value* w_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w_, g3}, "w.new");
  graph_.AddOutput(w_new);
  std::map<std::string, int64_t> roles = Infer();
  EXPECT_EQ(roles["w.grad"], kBackward);
  // A Constant has no dynamic input at all: it stays backward.
  EXPECT_EQ(roles["half"], kBackward);
  EXPECT_EQ(roles["g1"], kOptimize);
  EXPECT_EQ(roles["g2"], kOptimize);
  EXPECT_EQ(roles["g3"], kOptimize);
}

// Post-processing keeps the gradient's shape: a reduction into the optimizer (a bias gradient) is
// backward, and so is a node whose shapes are neither recorded nor inferable (an op without a
// contract); an unrecorded shape that the op contracts infer counts as recorded.
TEST_F(RoleInferenceTest, ShapeChangingOrUntypedIsBackward) {
  Value* axes = b_.Op("Constant", {}, "axes", {Attr("value_ints", std::vector<int64_t>{0})});
  Value* bias_grad =
      b_.SetType(b_.Op("ReduceSum", {grad_, axes}, "b.grad", {Attr("keepdims", 0)}), kF32, {3});
  Value* untyped = b_.Op({"com.example", "Mystery"}, {grad_}, "untyped");
  Value* inferred = b_.Op("Cast", {untyped}, "inferred", {Attr("to", 1)});
  Value* w2 = b_.Initializer("w2", {3, 3}, std::vector<float>(9, 0.5f));
  Value* typed_grad = b_.Op("Identity", {grad_}, "typed_grad");
  const std::vector<float> zeros(3, 0.0f);
  Value* bias = b_.Initializer("b", {3}, zeros);
  Value* b_new = b_.Op({kZerographDomain, "SGD"}, {lr_, bias, bias_grad}, "b.new");
  Value* w_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w_, inferred}, "w.new");
  Value* w2_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w2, typed_grad}, "w2.new");
  graph_.AddOutput(b_new);
  graph_.AddOutput(w_new);
  graph_.AddOutput(w2_new);
  std::map<std::string, int64_t> roles = Infer();
  EXPECT_EQ(roles["b.grad"], kBackward);
  EXPECT_EQ(roles["inferred"], kBackward);    // its input's shape is unknown
  EXPECT_EQ(roles["untyped"], kBackward);     // its user is backward
  EXPECT_EQ(roles["typed_grad"], kOptimize);  // no recorded type, an inferred one
  EXPECT_EQ(roles["b.new"], kOptimize);
}

// A node read by two chains into optimizers is post-processing once both chains are, whichever
// is found first: the walk back meets it from the longer chain before the shorter one is decided.
TEST_F(RoleInferenceTest, NodeIsOptimizerOnceEveryUserIs) {
  Value* w2 = b_.Initializer("w2", {3, 3}, std::vector<float>(9, 0.5f));
  Value* shared = b_.SetType(b_.Op("Cast", {grad_}, "shared", {Attr("to", 1)}), kF32, {3, 3});
  Value* short_chain = b_.SetType(b_.Op("Identity", {shared}, "short"), kF32, {3, 3});
  Value* long_chain = b_.SetType(b_.Op("Identity", {shared}, "long1"), kF32, {3, 3});
  long_chain = b_.SetType(b_.Op("Identity", {long_chain}, "long2"), kF32, {3, 3});
  graph_.AddOutput(b_.Op({kZerographDomain, "SGD"}, {lr_, w_, short_chain}, "w.new"));
  graph_.AddOutput(b_.Op({kZerographDomain, "SGD"}, {lr_, w2, long_chain}, "w2.new"));
  std::map<std::string, int64_t> roles = Infer();
  for (const char* name : {"shared", "short", "long1", "long2"}) {
    EXPECT_EQ(roles[name], kOptimize) << name;
  }
  EXPECT_EQ(roles["w.grad"], kBackward);  // computed from the forward's values: two dynamic inputs
}

// One optimizer node over many parameters is walked back from in slices of its inputs, on several
// threads where the machine has them: a node read by the chains of two gradients far apart (in
// other slices) is optimizer once both chains are, and backward where one of its users is not.
TEST_F(RoleInferenceTest, WalksBackFromALargeOptimizerInSlicesAsOneWalkWould) {
  constexpr int kPairs = 15000;  // 60001 optimizer inputs
  constexpr int kExportedEvery = 1000;
  std::vector<Value*> params;
  for (int i = 0; i < 2 * kPairs; ++i) {
    params.push_back(b_.Initializer(StrCat("w", i), {3, 3}, std::vector<float>(9, 0.5f)));
  }
  std::vector<Value*> grads(2 * kPairs);
  for (int i = 0; i < kPairs; ++i) {
    Value* shared = b_.SetType(b_.Op("Identity", {grad_}, StrCat("shared", i)), kF32, {3, 3});
    grads[i] = b_.SetType(b_.Op("Identity", {shared}, StrCat("a", i)), kF32, {3, 3});
    grads[kPairs + i] = b_.SetType(b_.Op("Identity", {shared}, StrCat("b", i)), kF32, {3, 3});
    if (i % kExportedEvery == 0)
      graph_.AddOutput(b_.Op("Relu", {grads[kPairs + i]}, StrCat("r", i)));
  }
  std::vector<Value*> inputs = {lr_};
  inputs.insert(inputs.end(), params.begin(), params.end());
  inputs.insert(inputs.end(), grads.begin(), grads.end());
  const std::string output = "all.new";
  graph_.AddOutput(b_.AddNode({kZerographDomain, "SGD"}, inputs, {&output, 1})->output(0));
  std::map<std::string, int64_t> roles = Infer();
  for (int i = 0; i < kPairs; ++i) {
    const bool exported = i % kExportedEvery == 0;
    EXPECT_EQ(roles[StrCat("a", i)], kOptimize) << i;
    EXPECT_EQ(roles[StrCat("b", i)], exported ? kBackward : kOptimize) << i;
    EXPECT_EQ(roles[StrCat("shared", i)], exported ? kBackward : kOptimize) << i;
  }
}

// Two dynamic inputs (two gradients, or a gradient and a trainable parameter) make a node backward.
TEST_F(RoleInferenceTest, TwoDynamicInputsIsBackward) {
  Value* sum = b_.Op("Add", {grad_, grad_}, "sum");
  Value* scaled = b_.Op("Mul", {sum, w_}, "scaled");
  Value* w_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w_, scaled}, "w.new");
  graph_.AddOutput(w_new);
  std::map<std::string, int64_t> roles = Infer();
  EXPECT_EQ(roles["sum"], kBackward);
  EXPECT_EQ(roles["scaled"], kBackward);
  EXPECT_EQ(roles["w.new"], kOptimize);
}

// A node with a user outside the optimizer, or whose output leaves the graph, is backward.
TEST_F(RoleInferenceTest, OtherUsersKeepNodeBackward) {
  Value* cast = b_.SetType(b_.Op("Cast", {grad_}, "cast", {Attr("to", 1)}), kF32, {3, 3});
  Value* also_read = b_.Op("Relu", {cast}, "also_read");
  Value* exported = b_.SetType(b_.Op("Identity", {grad_}, "exported"), kF32, {3, 3});
  Value* w_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w_, cast}, "w.new");
  Value* w_newer = b_.Op({kZerographDomain, "SGD"}, {lr_, w_new, exported}, "w.newer");
  graph_.AddOutput(also_read);
  graph_.AddOutput(exported);
  graph_.AddOutput(w_newer);
  std::map<std::string, int64_t> roles = Infer();
  EXPECT_EQ(roles["cast"], kBackward);
  EXPECT_EQ(roles["also_read"], kBackward);
  EXPECT_EQ(roles["exported"], kBackward);
  EXPECT_EQ(roles["w.newer"], kOptimize);
}

// A node after the loss that the loss does not depend on (a metric) is not forward.
TEST_F(RoleInferenceTest, NonAncestorOfLossIsNotForward) {
  Value* metric = b_.Op("ReduceMean", {x_}, "metric", {Attr("keepdims", 0)});
  graph_.AddOutput(metric);
  EXPECT_EQ(Infer()["metric"], kBackward);
}

// Every optimizer op is recognized with its input layout: a gradient scaled by a constant
// initializer is post-processing (optimizer), one multiplied by an optimizer state (updated, so
// dynamic) has two dynamic inputs (backward).
TEST_F(RoleInferenceTest, RecognizesEveryOptimizerAndItsStates) {
  const std::vector<float> zeros(9, 0.0f);
  struct Case {
    OpName op;
    int states;
  };
  const Case cases[] = {{{kZerographDomain, "AdamW"}, 2},
                        {{kTrainingDomain, "Adam"}, 2},
                        {{kTrainingDomain, "Momentum"}, 1},
                        {{kTrainingDomain, "Adagrad"}, 1}};
  int index = 0;
  for (const Case& c : cases) {
    // Two parameters, so that each run of the layout has n = 2 entries.
    Value* w2 = b_.Initializer(StrCat("w2_", index), {3, 3}, zeros);
    Value* constant = b_.Initializer(StrCat("c", index), {3, 3}, zeros);
    std::vector<Value*> states;
    for (int s = 0; s < 2 * c.states; ++s) {
      states.push_back(b_.Initializer(StrCat("state", index, "_", s), {3, 3}, zeros));
    }
    Value* by_constant =
        b_.SetType(b_.Op("Mul", {grad_, constant}, StrCat("by_constant", index)), kF32, {3, 3});
    Value* by_state =
        b_.SetType(b_.Op("Mul", {grad_, states.back()}, StrCat("by_state", index)), kF32, {3, 3});
    std::vector<Value*> inputs = {lr_, step_, w_, w2, by_constant, by_state};
    inputs.insert(inputs.end(), states.begin(), states.end());
    std::vector<std::string> outputs;
    for (int k = 0; k < 2 * (1 + c.states); ++k) outputs.push_back(StrCat("out", index, "_", k));
    Node* update = b_.AddNode(c.op, inputs, outputs);
    for (Value* output : update->outputs()) graph_.AddOutput(output);
    ++index;
  }
  std::map<std::string, int64_t> roles = Infer();
  for (int i = 0; i < index; ++i) {
    EXPECT_EQ(roles[StrCat("by_constant", i)], kOptimize) << i;
    EXPECT_EQ(roles[StrCat("by_state", i)], kBackward) << i;
    EXPECT_EQ(roles[StrCat("out", i, "_0")], kOptimize) << i;
  }
}

// Nodes that carry a role keep it; the others get the inferred one.
TEST_F(RoleInferenceTest, InferMissingRolesFillsOnlyMissing) {
  b_.SetRole(OpRole::kForward);
  Value* w_new = b_.Op({kZerographDomain, "SGD"}, {lr_, w_, grad_}, "w.new");
  graph_.AddOutput(w_new);
  ASSERT_TRUE(InferMissingRoles(graph_, spec_).ok());
  EXPECT_EQ(graph_.FindValue("loss")->producer()->role_bits(), kForward | kLoss);
  EXPECT_EQ(graph_.FindValue("w.grad")->producer()->role_bits(), kBackward);
  EXPECT_EQ(w_new->producer()->role_bits(), kForward);  // explicit, even if odd
}

// Loading reads each node for inference as it is linked (RoleInference::Add), in runs and on two
// threads at once: what it infers is what one sweep over the graph infers, whatever the order.
TEST_F(RoleInferenceTest, NodesAddedInRunsInferWhatOneSweepInfers) {
  Value* half = b_.Op("Constant", {}, "half", {Attr("value_float", 0.5f)});
  Value* g1 = b_.SetType(b_.Op("Mul", {grad_, half}, "g1"), kF32, {3, 3});
  Value* untyped = b_.Op({"com.example", "Mystery"}, {g1}, "untyped");
  Value* inferred = b_.Op("Cast", {untyped}, "inferred", {Attr("to", 1)});
  Value* w2 = b_.Initializer("w2", {3, 3}, std::vector<float>(9, 0.5f));
  Value* typed_grad = b_.Op("Identity", {g1}, "typed_grad");
  // Bound as state by the spec's binding only: scaling by it makes two dynamic inputs.
  Value* bound = b_.Initializer("bound", {3, 3}, std::vector<float>(9, 1.0f));
  Value* w3 = b_.Initializer("w3", {3, 3}, std::vector<float>(9, 0.5f));
  Value* by_bound = b_.SetType(b_.Op("Mul", {g1, bound}, "by_bound"), kF32, {3, 3});
  for (auto [param, gradient, name] :
       {std::tuple{w_, inferred, "w.new"}, std::tuple{w2, typed_grad, "w2.new"},
        std::tuple{w3, by_bound, "w3.new"}}) {
    graph_.AddOutput(b_.Op({kZerographDomain, "SGD"}, {lr_, param, gradient}, name));
  }
  ResolvedTrainingSpec spec;
  spec.spec = spec_;
  spec.binding_old_values = {bound};
  StatusOr<std::vector<int64_t>> swept = InferRoleBits(graph_, spec);
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();

  std::vector<const Node*> nodes(graph_.nodes().begin(), graph_.nodes().end());
  std::reverse(nodes.begin(), nodes.end());
  RoleInference inference;
  std::thread other([&] {
    for (size_t i = 0; i < nodes.size(); i += 4) {
      inference.Add(std::span(nodes).subspan(i, std::min<size_t>(2, nodes.size() - i)));
    }
  });
  for (size_t i = 2; i < nodes.size(); i += 4) {
    inference.Add(std::span(nodes).subspan(i, std::min<size_t>(2, nodes.size() - i)));
  }
  other.join();
  StatusOr<std::vector<int64_t>> forward = InferForwardRoleBits(graph_, spec.spec.loss);
  ASSERT_TRUE(forward.ok()) << forward.status().ToString();
  StatusOr<std::vector<int64_t>> added = inference.Run(graph_, spec, *std::move(forward));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, *swept);
  auto role_of = [&](const Value* value) { return (*added)[value->producer()->id()]; };
  EXPECT_EQ(role_of(g1), kBackward);  // a user is backward (Mystery)
  EXPECT_EQ(role_of(inferred), kBackward);
  EXPECT_EQ(role_of(typed_grad), kOptimize);
  EXPECT_EQ(role_of(by_bound), kBackward);
}

TEST_F(RoleInferenceTest, RejectsUnknownLoss) {
  spec_.loss = "nope";
  StatusOr<std::vector<int64_t>> roles = InferRoleBits(graph_, spec_);
  EXPECT_EQ(roles.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(roles.status().message().find("'nope'"), std::string_view::npos);
  spec_.loss = "x";
  EXPECT_EQ(InferRoleBits(graph_, spec_).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zerograph
