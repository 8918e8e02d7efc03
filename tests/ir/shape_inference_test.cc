#include "zerograph/ir/shape_inference.h"

#include <cstring>

#include <gtest/gtest.h>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"

namespace zerograph {
namespace {

class ShapeInferenceTest : public ::testing::Test {
 protected:
  Value* Input(const std::string& name, std::vector<int64_t> dims,
               DataType dtype = DataType::kFloat32) {
    return graph_.AddInput(name, TensorType{dtype, std::move(dims)});
  }
  Value* Int64s(const std::string& name, const std::vector<int64_t>& values) {
    std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    const int64_t dims[] = {static_cast<int64_t>(values.size())};
    return graph_.AddInitializer(name, DataType::kInt64, dims, bytes);
  }
  Graph graph_;
};

// A chain of untyped values gets every shape from the contracts, a host-read shape included.
TEST_F(ShapeInferenceTest, InfersAChainWithoutValueInfo) {
  Value* x = Input("x", {4, 6});
  Value* w = Input("w", {6, 3});
  Node* matmul = graph_.AddNode("MatMul", "", {x, w}, {"h"}, "matmul");
  Node* relu = graph_.AddNode("Relu", "", {matmul->output(0)}, {"r"}, "relu");
  Node* reshape =
      graph_.AddNode("Reshape", "", {relu->output(0), Int64s("shape", {-1})}, {"flat"}, "reshape");
  Node* sum = graph_.AddNode("ReduceSum", "", {reshape->output(0)}, {"s"}, "sum");
  sum->SetInt("keepdims", 0);
  Node* greater = graph_.AddNode("Greater", "", {relu->output(0), x}, {"mask"}, "greater");
  graph_.AddOutput(sum->output(0));
  // Greater's inputs do not broadcast ([4,3] and [4,6]): refused, naming the node.
  StatusOr<InferredShapes> refused = InferShapes(graph_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("node 'greater' (Greater)"), std::string_view::npos)
      << refused.status().ToString();
  ASSERT_TRUE(graph_.EraseNode(greater).ok());

  StatusOr<InferredShapes> shapes = InferShapes(graph_);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  ASSERT_NE(shapes->Find(*relu->output(0)), nullptr);
  EXPECT_EQ(*shapes->Find(*relu->output(0)), (TensorSpec{DataType::kFloat32, {4, 3}}));
  EXPECT_EQ(*shapes->Find(*reshape->output(0)), (TensorSpec{DataType::kFloat32, {12}}));
  EXPECT_EQ(*shapes->Find(*sum->output(0)), (TensorSpec{DataType::kFloat32, {}}));
  EXPECT_EQ(shapes->inferred(), 4);
}

// What cannot be known before running stays unknown rather than guessed: a symbolic dimension
// upstream, a shape computed at run time, an op without a contract.
TEST_F(ShapeInferenceTest, LeavesTheUnknowableUnknown) {
  Value* x = graph_.AddInput(
      "x", TensorType{DataType::kFloat32, std::vector<int64_t>{TensorType::kUnknownDim, 4}});
  Value* y = Input("y", {2, 4});
  Value* shape = Input("shape", {1}, DataType::kInt64);
  Node* relu = graph_.AddNode("Relu", "", {x}, {"r"}, "relu");
  Node* reshape = graph_.AddNode("Reshape", "", {y, shape}, {"flat"}, "reshape");
  Node* custom = graph_.AddNode("NoSuchOp", "", {y}, {"c"}, "custom");
  StatusOr<InferredShapes> shapes = InferShapes(graph_);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(shapes->Find(*relu->output(0)), nullptr);
  EXPECT_EQ(shapes->Find(*reshape->output(0)), nullptr);
  EXPECT_EQ(shapes->Find(*custom->output(0)), nullptr);
  EXPECT_EQ(shapes->inferred(), 0);
}

// A recorded type that disagrees with what the inputs make is an invalid graph.
TEST_F(ShapeInferenceTest, RecordedTypeMustAgree) {
  Value* x = Input("x", {4});
  Node* neg = graph_.AddNode("Neg", "", {x}, {"n"}, "neg");
  graph_.SetValueType(neg->output(0), TensorType{DataType::kFloat32, std::vector<int64_t>{5}});
  StatusOr<InferredShapes> shapes = InferShapes(graph_);
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("recorded as float[5] but its inputs make it "
                                           "float[4]"),
            std::string_view::npos)
      << shapes.status().ToString();
}

// Our own ops: LocalShard's shard follows the ranks, AllGather's nranks attribute.
TEST_F(ShapeInferenceTest, ShardsFollowTheRanks) {
  Value* fused = Input("fused", {24});
  Node* shard = graph_.AddNode("LocalShard", "org.zerograph", {fused}, {"s"}, "shard");
  Node* gather = graph_.AddNode("AllGather", "org.zerograph", {shard->output(0)}, {"g"}, "gather");
  gather->SetInt("nranks", 3);
  StatusOr<InferredShapes> shapes = InferShapes(graph_, /*nranks=*/3);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(shapes->Find(*shard->output(0))->shape, (Shape{8}));
  EXPECT_EQ(shapes->Find(*gather->output(0))->shape, (Shape{24}));
  EXPECT_FALSE(InferShapes(graph_, /*nranks=*/5).ok());  // 24 does not split into 5
}

// KnowableShapes, which runs no shape function, knows what InferShapes infers: on chains longer
// than one of its tasks, from a graph input and from an initializer, broken by a symbolic
// dimension, an op without a contract and a shape computed at run time, and mended by recorded
// types further down.
TEST_F(ShapeInferenceTest, KnowableShapesKnowWhatInferenceInfers) {
  constexpr int kChainLength = 5000;
  auto chain = [&](Value* from, const std::string& prefix, int mend_at) {
    Value* at = from;
    for (int i = 0; i < kChainLength; ++i) {
      at = graph_.AddNode("Relu", "", {at}, {StrCat(prefix, i)}, StrCat(prefix, "relu", i))
               ->output(0);
      if (i == mend_at) {
        graph_.SetValueType(at, TensorType{DataType::kFloat32, std::vector<int64_t>{2, 4}});
      }
    }
    return at;
  };
  Value* known = chain(Input("x", {2, 4}), "a", -1);
  const std::vector<std::byte> zeros(8 * sizeof(float));
  const int64_t weight_dims[] = {2, 4};
  Value* weights = graph_.AddInitializer("w", DataType::kFloat32, weight_dims, zeros);
  graph_.AddNode("Mul", "", {chain(weights, "w", -1), known}, {"scaled"}, "scaled");
  Value* symbolic = graph_.AddInput(
      "s", TensorType{DataType::kFloat32, std::vector<int64_t>{TensorType::kUnknownDim, 4}});
  Value* mended = chain(symbolic, "b", kChainLength / 2);
  Value* custom = graph_.AddNode("NoSuchOp", "", {known}, {"c"}, "custom")->output(0);
  Value* broken = chain(custom, "c", kChainLength - 10);
  Value* computed_shape = graph_.AddNode("Shape", "", {known}, {"shape"}, "shape")->output(0);
  Value* reshaped =
      graph_.AddNode("Reshape", "", {mended, computed_shape}, {"r"}, "reshape")->output(0);
  graph_.AddNode("Add", "", {known, mended}, {"sum"}, "sum");
  graph_.AddNode("Add", "", {known, reshaped}, {"late"}, "late");
  graph_.AddNode("Add", "", {broken, symbolic}, {"mixed"}, "mixed");

  StatusOr<InferredShapes> inferred = InferShapes(graph_);
  ASSERT_TRUE(inferred.ok()) << inferred.status().ToString();
  const std::vector<char> knowable = KnowableShapes(graph_);
  int64_t known_values = 0;
  int64_t unknown_values = 0;
  for (const Node* node : graph_.nodes()) {
    for (const Value* value : node->outputs()) {
      const bool found = inferred->Find(*value) != nullptr;
      EXPECT_EQ(static_cast<bool>(knowable[static_cast<size_t>(value->id())]), found)
          << value->name();
      ++(found ? known_values : unknown_values);
    }
  }
  // Unknown: the symbolic chain up to its recorded type, the custom op and its chain up to its
  // recorded type, the reshape and the two adds downstream of a break.
  EXPECT_EQ(unknown_values, kChainLength / 2 + 1 + (kChainLength - 10) + 1 + 2);
  EXPECT_EQ(known_values + unknown_values, 4 * kChainLength + 7);
}

}  // namespace
}  // namespace zerograph
