#include "zerograph/ir/graph_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/verify.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

// Nodes get the current role and loss bit, or none.
TEST(GraphBuilderTest, AppliesCurrentRole) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", kF32, {4});
  Value* forward = b.Op("Relu", {x}, "a");
  b.SetRole(OpRole::kForward, /*is_loss=*/true);
  Value* loss = b.Op("ReduceMean", {forward}, "loss");
  b.SetRole(OpRole::kOptimize);
  Value* update = b.Op("Neg", {loss}, "b");
  b.SetRole(std::nullopt);
  Value* plain = b.Op("Abs", {update}, "c");
  EXPECT_EQ(forward->producer()->role_bits(), 0);
  EXPECT_EQ(loss->producer()->role_bits(), kLossRoleBit);
  EXPECT_TRUE(loss->producer()->is_loss());
  EXPECT_EQ(update->producer()->role(), OpRole::kOptimize);
  EXPECT_FALSE(plain->producer()->has_role());
  EXPECT_FALSE(plain->producer()->HasAttribute(kOpRoleAttr));
}

// Taken value names become unique; every node gets a unique name.
TEST(GraphBuilderTest, NamesAreUnique) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", kF32, {4});
  Value* first = b.Op("Relu", {x}, "h");
  Value* second = b.Op("Relu", {first}, "h");
  EXPECT_EQ(first->name(), "h");
  EXPECT_NE(second->name(), "h");
  EXPECT_EQ(graph.FindValue(second->name()), second);
  EXPECT_FALSE(first->producer()->name().empty());
  EXPECT_NE(first->producer()->name(), second->producer()->name());
  b.Output(second);
  EXPECT_TRUE(Verify(graph).ok()) << Verify(graph).ToString();
}

// Every attribute kind lands with its typed setter.
TEST(GraphBuilderTest, SetsAttributesOfEveryKind) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", kF32, {4});
  Value* y = b.Op("Custom", {x}, "y",
                  {Attr("i", 3), Attr("i64", int64_t{1} << 40), Attr("f", 0.25f), Attr("d", 0.5),
                   Attr("s", "text"), Attr("ints", std::vector<int64_t>{1, 2}),
                   Attr("floats", std::vector<float>{1.5f}),
                   Attr("strings", std::vector<std::string>{"a", "b"})});
  const Node& node = *y->producer();
  EXPECT_EQ(node.GetInt("i"), 3);
  EXPECT_EQ(node.GetInt("i64"), int64_t{1} << 40);
  EXPECT_EQ(node.GetFloat("f"), 0.25f);
  EXPECT_EQ(node.GetFloat("d"), 0.5f);
  EXPECT_EQ(node.GetString("s"), "text");
  ASSERT_TRUE(node.GetInts("ints").has_value());
  EXPECT_EQ(std::vector<int64_t>(node.GetInts("ints")->begin(), node.GetInts("ints")->end()),
            (std::vector<int64_t>{1, 2}));
  ASSERT_TRUE(node.GetFloats("floats").has_value());
  EXPECT_EQ(node.GetFloats("floats")->size(), 1u);
  ASSERT_TRUE(node.GetStrings("strings").has_value());
  EXPECT_EQ(node.GetStrings("strings")->size(), 2u);
}

// The default domain's opset is imported up front, other domains at version 1 on first use.
TEST(GraphBuilderTest, ImportsOpsets) {
  Graph graph;
  GraphBuilder b(graph);
  EXPECT_EQ(graph.OpsetVersion(""), 17);
  EXPECT_FALSE(graph.OpsetVersion(kZerographDomain).has_value());
  Value* x = b.Input("x", kF32, {4});
  Value* dx = b.Op({kZerographDomain, "ReluGrad"}, {x, x}, "dx");
  EXPECT_EQ(dx->producer()->domain(), kZerographDomain);
  EXPECT_EQ(graph.OpsetVersion(kZerographDomain), 1);
  EXPECT_FALSE(graph.OpsetVersion(kTrainingDomain).has_value());
}

// Initializers hold the given floats or zeros; SetType records the type.
TEST(GraphBuilderTest, InitializersAndTypes) {
  Graph graph;
  GraphBuilder b(graph);
  const std::vector<float> values = {1.0f, -2.0f, 3.5f, 0.0f, 5.0f, 6.0f};
  Value* w = b.Initializer("w", {2, 3}, values);
  Value* m = b.Zeros("m", DataType::kInt64, {3});
  ASSERT_NE(w->initializer(), nullptr);
  EXPECT_EQ(w->type(), (TensorType{kF32, std::vector<int64_t>{2, 3}}));
  StatusOr<std::span<const std::byte>> bytes = w->initializer()->Bytes();
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), values.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(bytes->data(), values.data(), bytes->size()), 0);
  StatusOr<std::span<const std::byte>> zeros = m->initializer()->Bytes();
  ASSERT_TRUE(zeros.ok());
  ASSERT_EQ(zeros->size(), 3 * sizeof(int64_t));
  for (std::byte byte : *zeros) EXPECT_EQ(byte, std::byte{0});

  Value* y = b.SetType(b.Op("Relu", {w}, "y"), kF32, {2, 3});
  EXPECT_EQ(y->type(), (TensorType{kF32, std::vector<int64_t>{2, 3}}));
}

// A node with several outputs comes back whole.
TEST(GraphBuilderTest, AddNodeWithSeveralOutputs) {
  Graph graph;
  GraphBuilder b(graph);
  Value* x = b.Input("x", kF32, {4});
  const std::vector<Value*> inputs = {x};
  const std::vector<std::string> outputs = {"a", "b"};
  Node* node = b.AddNode("Split", inputs, outputs, {Attr("axis", 0)});
  ASSERT_EQ(node->num_outputs(), 2u);
  EXPECT_EQ(node->output(1)->name(), "b");
  EXPECT_EQ(node->GetInt("axis"), 0);
}

}  // namespace
}  // namespace zerograph
