#include "zerograph/ir/op_contract.h"

#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/shape_inference.h"
#include "zerograph/ir/verify.h"

namespace zerograph {
namespace {

class OpContractTest : public ::testing::Test {
 protected:
  Value* Input(const std::string& name, std::vector<int64_t> dims = {8}) {
    return graph_.AddInput(name, TensorType{DataType::kFloat32, std::move(dims)});
  }
  Graph graph_;
};

// Lookup picks the newest version not newer than the graph's opset; older than any is none.
TEST_F(OpContractTest, FindPicksTheVersionOfTheOpset) {
  const OpContracts& contracts = OpContracts::Get();
  ASSERT_NE(contracts.Find("", "ReduceSum", 12), nullptr);
  EXPECT_EQ(contracts.Find("", "ReduceSum", 12)->since_version, 1);
  EXPECT_EQ(contracts.Find("", "ReduceSum", 13)->since_version, 13);
  EXPECT_EQ(contracts.Find("ai.onnx", "ReduceSum")->since_version, 13);
  EXPECT_EQ(contracts.Find("", "Reshape", 4), nullptr);
  EXPECT_EQ(contracts.Find("", "NoSuchOp"), nullptr);
  EXPECT_TRUE(contracts.Find("", "ReduceSum", 13)->IsHostInput(1));
  EXPECT_FALSE(contracts.Find("", "ReduceSum", 12)->IsHostInput(1));
}

// The contracts say from a node alone whether it keeps its input's shape: elementwise ops and
// broadcasts against constant scalars do; a reduction without keepdims does not; the rest take
// the shapes (nullopt).
TEST_F(OpContractTest, KeepsInputShapeDecidesFromTheNodeAlone) {
  Value* x = Input("x", {2, 3});
  const int64_t no_dims[] = {0};
  const int64_t three[] = {3};
  const float scalar_value = 2.0f;
  const float row[] = {1.0f, 2.0f, 3.0f};
  const int64_t axes_value = 1;
  Value* scalar = graph_.AddInitializer("s", DataType::kFloat32, std::span(no_dims, 0),
                                        std::as_bytes(std::span(&scalar_value, 1)));
  Value* vector =
      graph_.AddInitializer("v", DataType::kFloat32, three, std::as_bytes(std::span(row)));
  const int64_t one[] = {1};
  Value* axes = graph_.AddInitializer("axes", DataType::kInt64, one,
                                      std::as_bytes(std::span(&axes_value, 1)));
  auto keeps = [&](Node* node, size_t input) -> std::optional<bool> {
    const OpContract* contract = GraphContracts(graph_).Find(*node);
    EXPECT_NE(contract, nullptr) << node->op_type();
    if (contract == nullptr || contract->keeps_input_shape == nullptr) return std::nullopt;
    return contract->keeps_input_shape(*node, input);
  };
  EXPECT_EQ(keeps(graph_.AddNode("Identity", "", {x}, {"i"}), 0), true);
  Node* cast = graph_.AddNode("Cast", "", {x}, {"c"});
  cast->SetInt("to", 10);
  EXPECT_EQ(keeps(cast, 0), true);
  EXPECT_EQ(keeps(graph_.AddNode("Mul", "", {x, scalar}, {"m"}), 0), true);
  EXPECT_EQ(keeps(graph_.AddNode("Mul", "", {scalar, x}, {"m2"}), 1), true);
  EXPECT_EQ(keeps(graph_.AddNode("Mul", "", {x, vector}, {"m3"}), 0), std::nullopt);
  EXPECT_EQ(keeps(graph_.AddNode("Add", "", {x, x}, {"a"}), 0), std::nullopt);
  Node* sum = graph_.AddNode("ReduceSum", "", {x, axes}, {"r"});
  sum->SetInt("keepdims", 0);
  EXPECT_EQ(keeps(sum, 0), false);
  Node* kept = graph_.AddNode("ReduceSum", "", {x, axes}, {"r2"});
  EXPECT_EQ(keeps(kept, 0), std::nullopt);  // keepdims 1: the shapes tell
  EXPECT_EQ(keeps(graph_.AddNode("Transpose", "", {x}, {"t"}), 0), std::nullopt);
}

// Attribute defaults are those of the version the graph's opset selects, and follow a change of
// the opset: Softmax's axis is 1 before opset 13 and -1 from it.
TEST_F(OpContractTest, DefaultsFollowTheGraphsOpset) {
  graph_.SetOpsetVersion("", 11);
  Value* x = Input("x", {2, 3});
  Node* softmax = graph_.AddNode("Softmax", "", {x}, {"y"}, "softmax");
  ASSERT_NE(softmax->contract(), nullptr);
  EXPECT_EQ(softmax->contract()->since_version, 1);
  StatusOr<int64_t> axis = ContractInt(*softmax, "axis");
  ASSERT_TRUE(axis.ok()) << axis.status().ToString();
  EXPECT_EQ(*axis, 1);
  graph_.SetOpsetVersion("", 13);
  EXPECT_EQ(softmax->contract()->since_version, 13);
  EXPECT_EQ(*ContractInt(*softmax, "axis"), -1);
}

// Every contract is well formed and its optimizers declare their layout.
TEST_F(OpContractTest, ContractsAreWellFormed) {
  for (const OpContract* contract : OpContracts::Get().All()) {
    EXPECT_NE(contract->infer, nullptr) << contract->ToString();
    for (const OpFormal& formal : contract->inputs) {
      EXPECT_TRUE(formal.type.empty() || contract->FindConstraint(formal.type) != nullptr)
          << contract->ToString() << " " << formal.name;
    }
  }
  const OpContract* adamw = OpContracts::Get().Find(kZerographDomain, "AdamW");
  ASSERT_NE(adamw, nullptr);
  ASSERT_TRUE(adamw->optimizer.has_value());
  EXPECT_EQ(adamw->optimizer->num_scalars, 2);
  EXPECT_EQ(adamw->optimizer->num_states, 2);
}

// Verify checks standard ops against their contracts: arity, omitted inputs, attribute types.
TEST_F(OpContractTest, VerifyRefusesWhatTheContractForbids) {
  Value* x = Input("x");
  Node* add = graph_.AddNode("Add", "", {x, x}, {"y"}, "add");
  ASSERT_TRUE(Verify(graph_).ok());
  graph_.AppendInput(add, x);
  Status status = Verify(graph_);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("node 'add' (Add): has 3 inputs, expected 2"),
            std::string_view::npos)
      << status.ToString();

  // A required attribute of another type fails Verify; an optional one fails where it is read
  // (the kernel registry checks every attribute), so that Verify never loads a node's message
  // for it.
  Graph other;
  Value* a = other.AddInput("a", TensorType{DataType::kFloat32, std::vector<int64_t>{2, 2}});
  Node* cast = other.AddNode("Cast", "", {a}, {"c"}, "cast");
  cast->SetString("to", "float");
  status = Verify(other);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("attribute 'to' has type STRING, expected INT"),
            std::string_view::npos)
      << status.ToString();
  Graph gemm_graph;
  Value* m = gemm_graph.AddInput("m", TensorType{DataType::kFloat32, std::vector<int64_t>{2, 2}});
  Node* gemm = gemm_graph.AddNode("Gemm", "", {m, m}, {"y"}, "gemm");
  gemm->SetString("transA", "yes");
  EXPECT_TRUE(Verify(gemm_graph).ok());
  const OpContract& contract = *OpContracts::Get().Find("", "Gemm");
  status = CheckNodeAgainstContract(*gemm, contract, AttributeCheck::kAll);
  EXPECT_NE(status.message().find("attribute 'transA' has type STRING, expected INT"),
            std::string_view::npos)
      << status.ToString();
}

// A required attribute without a value is refused; a defaulted one reads the contract's default.
TEST_F(OpContractTest, AttributesTakeTheContractsDefaults) {
  Value* x = Input("x");
  Node* cast = graph_.AddNode("Cast", "", {x}, {"y"}, "cast");
  EXPECT_FALSE(Verify(graph_).ok());
  StatusOr<int64_t> to = ContractInt(*cast, "to");
  ASSERT_FALSE(to.ok());
  EXPECT_NE(to.status().message().find("'to' is required"), std::string_view::npos);

  Node* gemm = graph_.AddNode("Gemm", "", {x, x}, {"g"}, "gemm");
  EXPECT_EQ(*ContractFloat(*gemm, "alpha"), 1.0f);
  EXPECT_EQ(*ContractInt(*gemm, "transB"), 0);
  gemm->SetInt("transB", 1);
  EXPECT_EQ(*ContractInt(*gemm, "transB"), 1);
  gemm->SetFloat("transA", 1.0f);
  EXPECT_FALSE(ContractInt(*gemm, "transA").ok());
}

// Optimizer nodes must split into their layout's per-parameter groups.
TEST_F(OpContractTest, OptimizerCountsFollowTheLayout) {
  Value* lr = graph_.AddInput("lr", TensorType{DataType::kFloat32, std::vector<int64_t>{}});
  Value* x = Input("x");
  Value* g = Input("g");
  graph_.AddNode("SGD", std::string(kZerographDomain), {lr, x, g}, {"x.new"}, "sgd");
  EXPECT_TRUE(Verify(graph_).ok());
  Graph bad;
  Value* lr2 = bad.AddInput("lr", TensorType{DataType::kFloat32, std::vector<int64_t>{}});
  Value* x2 = bad.AddInput("x", TensorType{DataType::kFloat32, std::vector<int64_t>{8}});
  bad.AddNode("SGD", std::string(kZerographDomain), {lr2, x2}, {"x.new"}, "sgd");
  Status status = Verify(bad);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("do not fit 1 scalars"), std::string_view::npos)
      << status.ToString();
}

// org.zerograph's optimizers take one trailing control input, which belongs to no parameter;
// ONNX's take none.
TEST_F(OpContractTest, OptimizerControlIsOneTrailingInput) {
  const OptimizerLayout adamw = *OpContracts::Get().Find(kZerographDomain, "AdamW")->optimizer;
  EXPECT_EQ(adamw.NumParams(2 + 4 * 3, 9), 3u);
  EXPECT_EQ(adamw.NumParams(2 + 4 * 3 + 1, 9), 3u);
  EXPECT_FALSE(adamw.NumParams(2 + 4 * 3 + 2, 9).has_value());
  EXPECT_FALSE(adamw.HasControl(2 + 4 * 3, 9));
  EXPECT_TRUE(adamw.HasControl(2 + 4 * 3 + 1, 9));
  const OptimizerLayout adam = *OpContracts::Get().Find(kTrainingDomain, "Adam")->optimizer;
  EXPECT_EQ(adam.NumParams(2 + 4 * 3, 9), 3u);
  EXPECT_FALSE(adam.NumParams(2 + 4 * 3 + 1, 9).has_value());

  Value* lr = graph_.AddInput("lr", TensorType{DataType::kFloat32, std::vector<int64_t>{}});
  Value* x1 = Input("x1");
  Value* x2 = Input("x2", {3});
  Value* g1 = Input("g1");
  Value* g2 = Input("g2", {3});
  Value* control = Input("control", {3});
  Node* sgd = graph_.AddNode("SGD", std::string(kZerographDomain), {lr, x1, x2, g1, g2, control},
                             {"x1.new", "x2.new"}, "sgd");
  EXPECT_TRUE(Verify(graph_).ok());
  StatusOr<InferredShapes> shapes = InferShapes(graph_);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(*shapes->Find(*sgd->output(1)), (TensorSpec{DataType::kFloat32, {3}}));
  std::optional<OptimizerSignature> signature = FindOptimizerSignature(*sgd);
  ASSERT_TRUE(signature.has_value());
  StatusOr<std::vector<OptimizerSlot>> slots = OptimizerSlots(*sgd, *signature);
  ASSERT_TRUE(slots.ok()) << slots.status().ToString();
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_EQ((*slots)[1].param, x2);
  EXPECT_EQ((*slots)[1].grad, g2);
  EXPECT_EQ(OptimizerControl(*sgd, *signature), control);
}

// A control that is not float[3] is refused by shape inference, naming the node.
TEST_F(OpContractTest, OptimizerControlOfAnotherShapeIsRefused) {
  Value* lr = graph_.AddInput("lr", TensorType{DataType::kFloat32, std::vector<int64_t>{}});
  graph_.AddNode("SGD", std::string(kZerographDomain),
                 {lr, Input("x"), Input("g"), Input("c", {2})}, {"x.new"}, "sgd_with_control");
  StatusOr<InferredShapes> shapes = InferShapes(graph_);
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("sgd_with_control"), std::string_view::npos)
      << shapes.status().ToString();
  EXPECT_NE(shapes.status().message().find("control"), std::string_view::npos)
      << shapes.status().ToString();
}

// GradientControl's attributes out of range, and a loss scale without its good-step count, are
// refused by Verify, naming the node and the cause; the defaults and the boundaries pass.
TEST_F(OpContractTest, GradientControlRefusesBadAttributes) {
  auto verify = [](const std::vector<std::pair<std::string, float>>& floats, int64_t interval,
                   bool scaled, bool good_steps) {
    Graph graph;
    auto scalar = [&](const std::string& name) {
      return graph.AddInput(name, TensorType{DataType::kFloat32, std::vector<int64_t>{}});
    };
    std::vector<Value*> inputs = {scalar("s")};
    if (scaled) inputs.push_back(scalar("scale"));
    if (good_steps) inputs.push_back(scalar("good"));
    std::vector<std::string> outputs = {"control"};
    if (scaled) outputs.insert(outputs.end(), {"scale.new", "good.new"});
    Node* node =
        graph.AddNode("GradientControl", std::string(kZerographDomain), inputs, outputs, "gc");
    for (const auto& [name, value] : floats) node->SetFloat(name, value);
    node->SetInt("growth_interval", interval);
    return Verify(graph);
  };
  EXPECT_TRUE(verify({}, 2000, false, false).ok());
  EXPECT_TRUE(
      verify({{"max_norm", 0.0f}, {"growth_factor", 1.0f}, {"backoff_factor", 1.0f}}, 1, true, true)
          .ok());
  const std::vector<std::tuple<std::vector<std::pair<std::string, float>>, int64_t, std::string>>
      bad = {{{{"max_norm", -1.0f}}, 2000, "max_norm"},
             {{{"growth_factor", 0.5f}}, 2000, "growth_factor"},
             {{{"backoff_factor", 0.0f}}, 2000, "backoff_factor"},
             {{{"backoff_factor", 1.5f}}, 2000, "backoff_factor"},
             {{}, 0, "growth_interval"}};
  for (const auto& [floats, interval, cause] : bad) {
    Status status = verify(floats, interval, true, true);
    ASSERT_FALSE(status.ok()) << cause;
    EXPECT_NE(status.message().find("'gc'"), std::string_view::npos) << status.ToString();
    EXPECT_NE(status.message().find(cause), std::string_view::npos) << status.ToString();
  }
  Status alone = verify({}, 2000, true, false);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.message().find("'gc'"), std::string_view::npos) << alone.ToString();
  EXPECT_NE(alone.message().find("together"), std::string_view::npos) << alone.ToString();
}

}  // namespace
}  // namespace zerograph
