// The edits that the graph keeps O(1) with side indexes (a use's position in its value's user
// list, a graph output's position in the output list) leave the graph as a plain search would.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/verify.h"

namespace zerograph {
namespace {

TensorType Float(std::vector<int64_t> dims) { return TensorType{DataType::kFloat32, dims}; }

// Readers of one shared value, erased in random order: the user list stays exact.
TEST(GraphEditScaleTest, EraseManyReadersOfOneValue) {
  Graph graph;
  Value* lr = graph.AddInput("lr", Float({}));
  Value* x = graph.AddInput("x", Float({4}));
  std::vector<Node*> readers;
  for (int i = 0; i < 500; ++i) {
    // Two uses of lr per node, so that a node's inputs move around in the list.
    readers.push_back(graph.AddNode("Sum", "", {x, lr, lr}, {StrCat("s", i)}, StrCat("n", i)));
  }
  std::mt19937 random(3);
  std::shuffle(readers.begin(), readers.end(), random);
  for (size_t k = 0; k < readers.size(); ++k) {
    ASSERT_TRUE(graph.EraseNode(readers[k]).ok());
    ASSERT_EQ(lr->users().size(), 2 * (readers.size() - k - 1));
    ASSERT_EQ(x->users().size(), readers.size() - k - 1);
    if (k % 50 == 0) {
      ASSERT_TRUE(Verify(graph).ok()) << Verify(graph).ToString();
    }
  }
  EXPECT_TRUE(Verify(graph).ok());
}

// SetInput, AppendInput and ReplaceAllUsesWith keep every use findable for a later erase.
TEST(GraphEditScaleTest, RewiredUsesCanBeErased) {
  Graph graph;
  Value* a = graph.AddInput("a", Float({}));
  Value* b = graph.AddInput("b", Float({}));
  std::vector<Node*> nodes;
  for (int i = 0; i < 100; ++i) {
    nodes.push_back(graph.AddNode("Sum", "", {a, b}, {StrCat("o", i)}));  // variadic
  }
  for (int i = 0; i < 100; i += 3) graph.SetInput(nodes[i], 0, b);
  for (int i = 1; i < 100; i += 3) graph.AppendInput(nodes[i], a);
  graph.ReplaceAllUsesWith(a, b);
  EXPECT_TRUE(a->users().empty());
  ASSERT_TRUE(Verify(graph).ok()) << Verify(graph).ToString();
  for (int i = 99; i >= 0; i -= 2) ASSERT_TRUE(graph.EraseNode(nodes[i]).ok());
  EXPECT_TRUE(Verify(graph).ok()) << Verify(graph).ToString();
}

// Graph outputs replaced, renamed and typed after some were dropped: each edit lands on the right
// output, as a scan of the outputs would find it.
TEST(GraphEditScaleTest, OutputEditsAfterDroppingOutputs) {
  Graph graph;
  Value* x = graph.AddInput("x", Float({2}));
  std::vector<Value*> values;
  for (int i = 0; i < 50; ++i) {
    values.push_back(graph.AddNode("Relu", "", {x}, {StrCat("v", i)}, StrCat("r", i))->output(0));
    graph.AddOutput(values.back());
  }
  graph.AddOutput(values[7]);  // listed twice
  graph.EraseOutputsIf([&](const Value* v) { return v == values[0] || v == values[10]; });
  for (int i = 1; i < 50; i += 4) {
    Value* copy = graph.AddNode("Neg", "", {x}, {StrCat("c", i)})->output(0);
    graph.ReplaceAllUsesWith(values[i], copy);
  }
  ASSERT_TRUE(graph.RenameValue(values[2], "renamed"));
  graph.SetValueType(values[3], Float({7}));
  graph.ReplaceAllUsesWith(values[7], values[8]);

  std::vector<std::string> expected;
  for (int i = 1; i < 50; ++i) {
    if (i == 10) continue;
    if (i % 4 == 1) {
      expected.push_back(StrCat("c", i));
    } else if (i == 2) {
      expected.push_back("renamed");
    } else if (i == 7) {
      expected.push_back("v8");
    } else {
      expected.push_back(StrCat("v", i));
    }
  }
  expected.push_back("v8");  // was values[7]'s second listing
  std::vector<std::string> actual;
  for (const Value* output : graph.outputs()) actual.emplace_back(output->name());
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(values[7]->is_graph_output(), false);
  EXPECT_EQ(values[3]->type()->dims, (std::vector<int64_t>{7}));
  EXPECT_TRUE(Verify(graph).ok()) << Verify(graph).ToString();
}

// A schedule large enough to be followed in pieces on several threads, after moves (a node in 50
// to the front, runs of nodes moved later) and erasures: ScheduledNodes lists what the links do.
TEST(GraphEditScaleTest, ScheduledNodesAfterMovesOnSeveralThreads) {
  constexpr int kNodes = 200'000;
  Graph graph;
  Value* x = graph.AddInput("x", Float({4}));
  std::vector<Node*> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(graph.AddNode("Relu", "", {x}, {StrCat("y", i)}, StrCat("relu", i)));
  }
  std::mt19937 random(5);
  for (int i = 0; i < kNodes; i += 50) graph.MoveBefore(nodes[static_cast<size_t>(i)], nodes[0]);
  for (int i = 0; i < 2000; ++i) {
    Node* node = nodes[random() % nodes.size()];
    Node* anchor = nodes[random() % nodes.size()];
    if (!node->erased() && !anchor->erased() && node != anchor) graph.MoveAfter(node, anchor);
    Node* erased = nodes[random() % nodes.size()];
    if (i % 3 == 0 && !erased->erased()) {
      ASSERT_TRUE(graph.EraseNode(erased).ok());
    }
  }
  std::vector<const Node*> linked;
  for (const Node* node : graph.nodes()) linked.push_back(node);
  const std::vector<Node*> scheduled = graph.ScheduledNodes();
  EXPECT_TRUE(std::equal(scheduled.begin(), scheduled.end(), linked.begin(), linked.end()));
  EXPECT_EQ(scheduled.size(), graph.num_nodes());
}

}  // namespace
}  // namespace zerograph
