#include "zerograph/ir/verify.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zerograph
