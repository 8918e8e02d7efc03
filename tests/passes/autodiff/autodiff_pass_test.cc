#include "zerograph/passes/autodiff_pass.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/role_inference.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"
#include "zerograph/ir/verify.h"
#include "zerograph/passes/autodiff.h"

namespace zerograph {
namespace {

using autodiff::RandomValues;

// A forward model: x [batch, 4] -> Gemm(w, b) -> Relu -> MatMul(v) -> y [batch, 3], plus a float
// initializer `unused` that no output reads.
class AutodiffPassTest : public ::testing::Test {
 protected:
  AutodiffPassTest() : graph_(std::make_unique<Graph>()) {
    graph_->SetName("forward");
    GraphBuilder b(*graph_);
    b.SetRole(std::nullopt);
    Value* x = b.Input("x", DataType::kFloat32, {TensorType::kUnknownDim, 4});
    b.Initializer("unused", {2}, RandomValues(2, 9));
    Value* h = b.Op("Gemm",
                    {x, b.Initializer("w", {4, 5}, RandomValues(20, 1)),
                     b.Initializer("b", {5}, RandomValues(5, 2))},
                    "h");
    Value* y = b.Op("MatMul",
                    {b.Op("Relu", {h}, "a"), b.Initializer("v", {5, 3}, RandomValues(15, 3))}, "y");
    b.SetType(y, DataType::kFloat32, {TensorType::kUnknownDim, 3});
    b.Output(y);
  }

  StatusOr<bool> Run(AutodiffPass::Options options) {
    return AutodiffPass(std::move(options)).Run(*graph_);
  }
  int Count(std::string_view op_type) const {
    int n = 0;
    for (const Node* node : graph_->nodes()) n += node->op_type() == op_type ? 1 : 0;
    return n;
  }
  const Node* Find(std::string_view op_type) const {
    for (const Node* node : graph_->nodes()) {
      if (node->op_type() == op_type) return node;
    }
    return nullptr;
  }

  std::unique_ptr<Graph> graph_;
};

// MSE with AdamW: roles in schedule order, the states, outputs and metadata of formats.md.
TEST_F(AutodiffPassTest, MseAdamWMakesATrainingGraph) {
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kMeanSquaredError;
  options.label = "target";
  ASSERT_TRUE(Run(options).ok());
  ASSERT_TRUE(Verify(*graph_).ok());

  // Forward (with the loss node last, role 256), then backward, then one optimizer node.
  int phase = 0;  // 0 forward, 1 backward, 2 optimizer
  for (const Node* node : graph_->nodes()) {
    const int role = static_cast<int>(node->role());
    EXPECT_GE(role, phase) << node->name();
    phase = role;
    EXPECT_EQ(node->is_loss(), node->op_type() == "ReduceMean" && role == 0) << node->name();
  }
  EXPECT_EQ(Count("AdamW"), 1);
  const Node* adamw = Find("AdamW");
  // lr, step, then w, b, v (file order; `unused` reaches no output), grads, m1s, m2s.
  ASSERT_EQ(adamw->num_inputs(), 2u + 4 * 3);
  EXPECT_EQ(adamw->input(2)->name(), "w");
  EXPECT_EQ(adamw->input(4)->name(), "v");
  EXPECT_EQ(adamw->input(8)->name(), "w.m1");
  EXPECT_EQ(adamw->input(13)->name(), "v.m2");
  EXPECT_FLOAT_EQ(*adamw->GetFloat("weight_decay"), 0.01f);
  EXPECT_FALSE(adamw->HasAttribute("adam_mode"));

  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph_);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_TRUE(spec->has_value());
  EXPECT_EQ((*spec)->loss, "loss");
  EXPECT_EQ((*spec)->data_inputs, (std::vector<std::string>{"x", "target"}));
  EXPECT_EQ((*spec)->lr_input, "lr");
  EXPECT_EQ((*spec)->step_input, "step");
  ASSERT_EQ((*spec)->state_binding.size(), 9u);
  EXPECT_EQ((*spec)->state_binding[0], (std::pair<std::string, std::string>{"w.new", "w"}));
  EXPECT_EQ((*spec)->state_binding[8], (std::pair<std::string, std::string>{"v.m2.new", "v.m2"}));
  // Outputs: the loss and the new values only; the label as the output's type, batch unknown.
  ASSERT_EQ(graph_->outputs().size(), 10u);
  EXPECT_EQ(graph_->outputs()[0]->name(), "loss");
  EXPECT_EQ(graph_->FindValue("target")->type(),
            (TensorType{DataType::kFloat32, std::vector<int64_t>{TensorType::kUnknownDim, 3}}));
}

// The roles written are the ones docs/formats.md infers for a graph without them.
TEST_F(AutodiffPassTest, RolesAgreeWithRoleInference) {
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kMeanSquaredError;
  options.optimizer = AutodiffPass::Optimizer::kAdam;
  options.weight_decay = 0.1f;
  ASSERT_TRUE(Run(options).ok());
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph_);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  StatusOr<std::vector<int64_t>> inferred = InferRoleBits(*graph_, **spec);
  ASSERT_TRUE(inferred.ok()) << inferred.status().message();
  for (const Node* node : graph_->nodes()) {
    EXPECT_EQ((*inferred)[static_cast<size_t>(node->id())], node->role_bits())
        << node->name() << " (" << node->op_type() << ")";
  }
}

// Adam with weight decay adds it to the gradient (L2); the AdamW node gets weight_decay 0, and
// --adam-mode 1 / --no-bias-correction are written.
TEST_F(AutodiffPassTest, AdamAddsWeightDecayToTheGradient) {
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kMeanSquaredError;
  options.optimizer = AutodiffPass::Optimizer::kAdam;
  options.weight_decay = 0.1f;
  options.adam_mode = 1;
  options.bias_correction = false;
  ASSERT_TRUE(Run(options).ok());
  const Node* adamw = Find("AdamW");
  EXPECT_FLOAT_EQ(*adamw->GetFloat("weight_decay"), 0.0f);
  EXPECT_EQ(adamw->GetInt("adam_mode"), 1);
  EXPECT_EQ(adamw->GetInt("correct_bias"), 0);
  // Each gradient: g + wd·param.
  const Value* grad_w = adamw->input(2 + 3);
  ASSERT_NE(grad_w->producer(), nullptr);
  EXPECT_EQ(grad_w->producer()->op_type(), "Add");
  EXPECT_EQ(grad_w->producer()->role(), OpRole::kBackward);
}

// SGD with a frozen parameter: only the others are updated, and there is no step input.
TEST_F(AutodiffPassTest, SgdSkipsFrozenParameters) {
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kMeanSquaredError;
  options.optimizer = AutodiffPass::Optimizer::kSgd;
  options.frozen = {"b"};
  ASSERT_TRUE(Run(options).ok());
  const Node* sgd = Find("SGD");
  ASSERT_NE(sgd, nullptr);
  ASSERT_EQ(sgd->num_inputs(), 1u + 2 * 2);
  EXPECT_EQ(sgd->input(1)->name(), "w");
  EXPECT_EQ(sgd->input(2)->name(), "v");
  EXPECT_EQ(graph_->FindValue("step"), nullptr);
}

// Cross-entropy: the label is int64 of the scores' shape less the class axis.
TEST_F(AutodiffPassTest, CrossEntropyLabelDropsTheClassAxis) {
  AutodiffPass::Options options;
  options.ignore_index = -1;
  ASSERT_TRUE(Run(options).ok());
  EXPECT_EQ(graph_->FindValue("labels")->type(),
            (TensorType{DataType::kInt64, std::vector<int64_t>{TensorType::kUnknownDim}}));
  const Node* loss = Find("SoftmaxCrossEntropyLoss");
  ASSERT_NE(loss, nullptr);
  EXPECT_TRUE(loss->is_loss());
  EXPECT_EQ(loss->GetString("reduction"), "mean");
  EXPECT_EQ(loss->GetInt("ignore_index"), -1);
}

// --loss output: the graph's own scalar output is the loss; no label is added. The forward
// outputs are dropped, and the node that computed only one of them is erased.
TEST(AutodiffPassLossOutputTest, TrainsOnTheGraphsOwnLoss) {
  Graph graph;
  GraphBuilder b(graph);
  b.SetRole(std::nullopt);
  Value* x = b.Input("x", DataType::kFloat32, {TensorType::kUnknownDim, 4});
  Value* y = b.Op("MatMul", {x, b.Initializer("w", {4, 2}, RandomValues(8, 1))}, "y");
  Value* mean =
      b.SetType(b.Op("ReduceMean", {y}, "mean", {Attr("keepdims", 0)}), DataType::kFloat32, {});
  b.Output(y);
  b.Output(mean);
  b.Output(b.Op("Relu", {y}, "only_an_output"));
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kOutput;
  options.loss_on = "mean";
  StatusOr<bool> ran = AutodiffPass(options).Run(graph);
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  EXPECT_TRUE(mean->producer()->is_loss());
  EXPECT_EQ(graph.FindValue("labels"), nullptr);
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(graph);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  EXPECT_EQ((*spec)->loss, "mean");
  EXPECT_EQ((*spec)->data_inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(graph.outputs()[0], mean);
  for (const Node* node : graph.nodes()) EXPECT_NE(node->op_type(), "Relu");
}

// Each refusal names its cause.
TEST_F(AutodiffPassTest, RefusesBadOptions) {
  AutodiffPass::Options options;
  options.loss_on = "nope";
  StatusOr<bool> ran = Run(options);
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.status().message().find("has no output 'nope' (its outputs: y)"),
            std::string_view::npos)
      << ran.status().message();

  options = {};
  options.frozen = {"w", "b", "v", "unused"};
  ran = Run(options);
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.status().message().find("every one is --frozen"), std::string_view::npos);

  options = {};
  options.frozen = {"x"};
  ran = Run(options);
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.status().message().find("--frozen 'x'"), std::string_view::npos);

  options = {};
  options.loss = AutodiffPass::Loss::kOutput;
  ran = Run(options);
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.status().message().find("not a floating scalar"), std::string_view::npos);
}

// AppendBackward: a value the loss does not read gets no gradient (null), nor does one reached
// only through an integer (Shape) or a non-differentiable op.
TEST(AppendBackwardTest, NoPathNoGradient) {
  Graph graph;
  GraphBuilder b(graph);
  Value* w = b.Initializer("w", {2, 2}, RandomValues(4, 1));
  Value* unused = b.Initializer("unused", {2}, RandomValues(2, 2));
  Value* through_shape = b.Initializer("s", {2, 2}, RandomValues(4, 3));
  Value* shaped = b.Op("Reshape", {w, b.Op("Shape", {through_shape}, "shape")}, "shaped");
  Value* floor = b.Op("Floor", {b.Initializer("f", {2, 2}, RandomValues(4, 4))}, "floor");
  Value* product = b.Op("MatMul", {shaped, floor}, "product");
  Value* loss = b.Op("ReduceSum", {product}, "loss", {Attr("keepdims", 0)});
  Value* const wrt[] = {w, unused, through_shape, graph.FindValue("f")};
  const int64_t before = static_cast<int64_t>(graph.num_nodes());
  StatusOr<std::vector<Value*>> grads = AppendBackward(graph, loss, wrt);
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  EXPECT_NE((*grads)[0], nullptr);
  EXPECT_EQ((*grads)[1], nullptr);
  EXPECT_EQ((*grads)[2], nullptr);
  EXPECT_EQ((*grads)[3], nullptr);
  EXPECT_GT(static_cast<int64_t>(graph.num_nodes()), before);
}

// An op without a rule on the path is refused, naming the node and its op, before any node is
// added.
TEST(AppendBackwardTest, OpWithoutRuleIsNamed) {
  Graph graph;
  GraphBuilder b(graph);
  Value* w = b.Initializer("w", {2}, RandomValues(2, 1));
  Value* y = b.Op({"com.foo", "Bar"}, {w}, "y");
  Value* loss = b.SetType(b.Op("MatMul", {y, w}, "loss"), DataType::kFloat32, {});
  Value* const wrt[] = {w};
  const size_t before = graph.num_nodes();
  StatusOr<std::vector<Value*>> grads = AppendBackward(graph, loss, wrt);
  ASSERT_FALSE(grads.ok());
  EXPECT_EQ(grads.status().message(),
            "node 'Bar_0' (com.foo.Bar) is on the path to the loss and has no gradient rule");
  EXPECT_EQ(graph.num_nodes(), before);
}

}  // namespace
}  // namespace zerograph
