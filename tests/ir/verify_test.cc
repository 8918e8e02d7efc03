#include "zerograph/ir/verify.h"

#include <gtest/gtest.h>

#include "zerograph/ir/graph.h"

namespace zerograph {
namespace {

class VerifyTest : public ::testing::Test {
 protected:
  Value* Input(const std::string& name) {
    return graph_.AddInput(name, TensorType{DataType::kFloat32, std::vector<int64_t>{8}});
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

}  // namespace
}  // namespace zerograph
