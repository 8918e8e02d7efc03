#include "zerograph/ir/verify.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "zerograph/ir/graph.h"

namespace zerograph {
namespace {

class VerifyTest : public ::testing::Test {
 protected:
  Value* Input(const std::string& name) {
    return graph_.AddInput(name, TensorType{DataType::kFloat32, std::vector<int64_t>{8}});
  }
  // A chain of `length` Neg nodes n0, n1, ... from input x: enough nodes for every thread there
  // is to check chunks of them.
  std::vector<Node*> NegChain(int length) {
    Value* value = Input("x");
    std::vector<Node*> chain;
    for (int i = 0; i < length; ++i) {
      chain.push_back(
          graph_.AddNode("Neg", "", {value}, {"v" + std::to_string(i)}, "n" + std::to_string(i)));
      value = chain.back()->output(0);
    }
    return chain;
  }
  Graph graph_;
};

// A schedule reordered so a reader runs before its producer is caught, naming both.
TEST_F(VerifyTest, CatchesMoveBeforeProducer) {
  Value* x = Input("x");
  Node* a = graph_.AddNode("Relu", "", {x}, {"y"}, "a");
  Node* b = graph_.AddNode("Neg", "", {a->output(0)}, {"z"}, "b");
  ASSERT_TRUE(Verify(graph_).ok());
  graph_.MoveBefore(b, a);
  Status status = Verify(graph_);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("node 'b' (Neg) reads 'y' before node 'a' (Relu)"),
            std::string_view::npos)
      << status.message();
}

// Large graphs are checked in chunks on several threads; the error reported is still the first in
// the order the nodes were made, whichever chunk a thread finished first.
TEST_F(VerifyTest, LargeGraphReportsTheFirstErrorInNodeOrder) {
  std::vector<Node*> chain = NegChain(150000);
  graph_.AddOutput(chain.back()->output(0));
  ASSERT_TRUE(Verify(graph_).ok()) << Verify(graph_).message();

  // Two readers moved before their producers, the later one in a later chunk.
  graph_.MoveBefore(chain[140001], chain[140000]);
  graph_.MoveBefore(chain[70001], chain[70000]);
  for (int run = 0; run < 5; ++run) {
    Status status = Verify(graph_);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("node 'n70001' (Neg) reads 'v70000' before node 'n70000'"),
              std::string_view::npos)
        << status.message();
  }
}

// Our own ops are checked for arity and attributes: a CoalesceTensors without offsets fails.
TEST_F(VerifyTest, ChecksCoalesceTensorsAttributes) {
  Value* x = Input("x");
  Value* y = Input("y");
  Node* coalesce = graph_.AddNode("CoalesceTensors", "org.zerograph", {x, y}, {"fused"}, "c");
  EXPECT_FALSE(Verify(graph_).ok());
  coalesce->SetInts("offsets", std::vector<int64_t>{0, 16});
  coalesce->SetInts("numels", std::vector<int64_t>{8, 8});
  EXPECT_FALSE(Verify(graph_).ok());  // still no total
  coalesce->SetInt("total", 32);
  EXPECT_TRUE(Verify(graph_).ok());
  coalesce->SetInts("numels", std::vector<int64_t>{8});
  EXPECT_FALSE(Verify(graph_).ok());  // one entry per input
}

// ReduceScatter accepts only 'sum' and 'avg'.
TEST_F(VerifyTest, ChecksReduceOp) {
  Value* x = Input("x");
  Node* rs = graph_.AddNode("ReduceScatter", "org.zerograph", {x}, {"s"}, "rs");
  rs->SetInt("nranks", 2);
  rs->SetString("reduce_op", "avg");
  EXPECT_TRUE(Verify(graph_).ok());
  rs->SetString("reduce_op", "max");
  Status status = Verify(graph_);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'max'"), std::string_view::npos);
}

// AdamW takes (lr, step, X.., G.., M.., V..) and gives (X'.., M'.., V'..).
TEST_F(VerifyTest, ChecksAdamWArity) {
  std::vector<Value*> inputs;
  for (const char* name : {"lr", "step", "w", "g", "m", "v"}) inputs.push_back(Input(name));
  graph_.AddNode("AdamW", "org.zerograph", inputs, std::vector<std::string>{"w2", "m2", "v2"},
                 "adamw");
  EXPECT_TRUE(Verify(graph_).ok());
  graph_.AddNode("AdamW", "org.zerograph", inputs, std::vector<std::string>{"w3", "m3"}, "bad");
  EXPECT_FALSE(Verify(graph_).ok());
}

// A loaded graph is checked against the op contracts alone (loading refuses broken edges, names
// and order itself); the first violation in the order given is reported.
TEST_F(VerifyTest, ContractsReportTheFirstViolationInTheOrderGiven) {
  std::vector<Node*> chain = NegChain(1000);
  const std::vector<const Node*> nodes(chain.begin(), chain.end());
  ASSERT_TRUE(VerifyContracts(nodes).ok());
  // Neg takes one input: two nodes given a second.
  graph_.AppendInput(chain[900], chain[0]->output(0));
  graph_.AppendInput(chain[600], chain[0]->output(0));
  Status status = VerifyContracts(nodes);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'n600'"), std::string_view::npos) << status.message();
  status = VerifyContracts(std::span(nodes).subspan(700));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'n900'"), std::string_view::npos) << status.message();
  EXPECT_FALSE(Verify(graph_).ok());  // Verify checks the contracts too
}

// Verify checks a node against its contract again only once it changed, so every kind of edit
// must count. Each edit below breaks the contract of a node that passed, and nothing else: Verify
// must see it. Annotations (role, stream, bucket), which no contract declares, keep the check.
Status VerifyAfterEdit(const std::function<void(Graph&, Node* relu)>& edit) {
  Graph graph;
  graph.SetOpsetVersion("", 13);
  Value* x = graph.AddInput("x", TensorType{DataType::kFloat32, std::vector<int64_t>{8}});
  Node* neg = graph.AddNode("Neg", "", {x}, {"y"}, "neg");
  Node* relu = graph.AddNode("Relu", "", {neg->output(0)}, {"z"}, "relu");
  graph.AddOutput(relu->output(0));
  EXPECT_TRUE(Verify(graph).ok());
  EXPECT_TRUE(neg->contract_checked() && relu->contract_checked());
  edit(graph, relu);
  return Verify(graph);
}

TEST_F(VerifyTest, ChecksANodeAgainOnceItsEdgesChanged) {
  Status status = VerifyAfterEdit([](Graph& graph, Node* relu) {
    graph.AppendInput(relu, graph.inputs()[0]);
    EXPECT_FALSE(relu->contract_checked());
  });
  EXPECT_NE(status.message().find("'relu' (Relu): has 2 inputs"), std::string_view::npos)
      << status.message();
  status = VerifyAfterEdit([](Graph& graph, Node* relu) { graph.SetInput(relu, 0, nullptr); });
  EXPECT_NE(status.message().find("omits input 0"), std::string_view::npos) << status.message();
  status = VerifyAfterEdit([](Graph& graph, Node* relu) {
    Value* w = graph.AddInitializer("w", DataType::kFloat32, std::vector<int64_t>{8},
                                    std::string(32, '\0'));
    graph.AdoptAsOutput(relu, w, TensorType{DataType::kFloat32, std::vector<int64_t>{8}});
  });
  EXPECT_NE(status.message().find("'relu' (Relu): has 2 outputs"), std::string_view::npos)
      << status.message();
  status = VerifyAfterEdit([](Graph& graph, Node* relu) {
    relu->SetRole(OpRole::kBackward);
    relu->SetStream("comm");
    relu->SetBucket(0);
    EXPECT_TRUE(relu->contract_checked());
    graph.ReplaceAllUsesWith(relu->input(0), graph.inputs()[0]);  // still a valid Relu
    EXPECT_FALSE(relu->contract_checked());
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

// Attribute edits, and a new contract for the op when the opset changes, count as well.
TEST_F(VerifyTest, ChecksANodeAgainOnceItsAttributesOrContractChanged) {
  graph_.SetOpsetVersion("", 13);
  Value* x = Input("x");
  Value* axes = graph_.AddInitializer("axes", DataType::kInt64, std::vector<int64_t>{1},
                                      std::string(8, '\0'));
  Node* sum = graph_.AddNode("ReduceSum", "", {x, axes}, {"s"}, "sum");
  Node* rs = graph_.AddNode("ReduceScatter", "org.zerograph", {sum->output(0)}, {"rs"}, "rs");
  rs->SetInt("nranks", 2);
  graph_.AddOutput(rs->output(0));
  ASSERT_TRUE(Verify(graph_).ok()) << Verify(graph_).message();
  ASSERT_TRUE(sum->contract_checked() && rs->contract_checked());

  ASSERT_TRUE(rs->RemoveAttribute("nranks"));
  EXPECT_FALSE(Verify(graph_).ok());  // nranks is required
  rs->SetInt("nranks", 2);
  ASSERT_TRUE(Verify(graph_).ok());
  rs->SetString("nranks", "two");
  EXPECT_FALSE(Verify(graph_).ok());
  rs->SetInt("nranks", 2);
  ASSERT_TRUE(Verify(graph_).ok());

  // ReduceSum took its axes as an attribute before opset 13: an axes input is one too many.
  graph_.SetOpsetVersion("", 11);
  EXPECT_FALSE(sum->contract_checked());
  EXPECT_TRUE(rs->contract_checked());  // another domain
  EXPECT_FALSE(Verify(graph_).ok());
  graph_.SetOpsetVersion("", 13);
  EXPECT_TRUE(Verify(graph_).ok());
}

}  // namespace
}  // namespace zerograph
