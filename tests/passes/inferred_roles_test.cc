// Role inference on graphs without annotations and without value_info (docs/formats.md, "Training
// graph"): the roles equal the explicit ones node for node, and the overlap pass moves the same
// nodes with either.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "passes/toy_training_graph.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/role_inference.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/passes/hazard_check.h"
#include "zerograph/passes/overlap.h"
#include "zerograph/passes/pass_pipeline.h"
#include "zerograph/passes/sharding_stage1.h"

namespace zerograph {
namespace {

// Gradient chains of 0 to 3 post-processing nodes (Mul by a constant, Cast, Identity). (The toy
// graph's forward adds fp32 and fp16 sums, which shape inference refuses: fp32 only.)
ToyConfig ChainsOfEveryLength() {
  return ToyConfig{{{"p0", DataType::kFloat32, 64, 0},
                    {"p1", DataType::kFloat32, 48, 1},
                    {"p2", DataType::kFloat32, 32, 2},
                    {"p3", DataType::kFloat32, 80, 3}}};
}

ToyConfig WithoutAnnotations(ToyConfig config) {
  config.roles = false;
  config.value_info = false;
  return config;
}

TrainingSpec Spec(const Graph& graph) {
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(graph);
  EXPECT_TRUE(spec.ok() && spec->has_value());
  return spec.ok() && spec->has_value() ? **spec : TrainingSpec{};
}

// Role bits by the name of each node's first output.
std::map<std::string, int64_t> ExplicitRoles(const Graph& graph) {
  std::map<std::string, int64_t> roles;
  for (const Node* node : graph.nodes())
    roles[std::string(node->output(0)->name())] = node->role_bits();
  return roles;
}

std::map<std::string, int64_t> InferredRoles(const Graph& graph) {
  std::map<std::string, int64_t> roles;
  StatusOr<std::vector<int64_t>> bits = InferRoleBits(graph, Spec(graph));
  EXPECT_TRUE(bits.ok()) << bits.status().ToString();
  if (!bits.ok()) return roles;
  for (const Node* node : graph.nodes()) {
    roles[std::string(node->output(0)->name())] = (*bits)[static_cast<size_t>(node->id())];
  }
  return roles;
}

std::vector<std::string> Schedule(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node* node : graph.nodes()) names.emplace_back(node->output(0)->name());
  return names;
}

Status RewriteWithOverlap(Graph& graph) {
  PassPipeline pipeline(/*verify_each=*/true);
  pipeline.AddPass<ShardingStage1Pass>(ShardingStage1Pass::Options{
      /*nranks=*/2, /*comm_buffer_mb=*/256, BucketOrder::kGradientReady});
  pipeline.AddPass<OverlapPass>();
  StatusOr<bool> changed = pipeline.Run(graph);
  if (!changed.ok()) return changed.status();
  return CheckHazards(graph);
}

// Without value_info the chains' shapes come from shape inference: every chain node is optimizer,
// each raw gradient (a broadcast, which changes the shape) backward, the loss forward with the
// loss bit, as the explicit annotations say.
TEST(InferredRolesTest, EqualExplicitRolesWithoutValueInfo) {
  auto explicit_graph = BuildToyTrainingGraph(ChainsOfEveryLength());
  auto bare_graph = BuildToyTrainingGraph(WithoutAnnotations(ChainsOfEveryLength()));
  const std::map<std::string, int64_t> expected = ExplicitRoles(*explicit_graph);
  EXPECT_EQ(InferredRoles(*bare_graph), expected);
  EXPECT_EQ(expected.at("loss"), kLossRoleBit);
  EXPECT_EQ(expected.at("p3.c3"), static_cast<int64_t>(OpRole::kOptimize));
  EXPECT_EQ(expected.at("p3.graw"), static_cast<int64_t>(OpRole::kBackward));
}

// Loaded roles, inferred ones: the overlap pass gives the same schedule, with every chain moved
// right after its backward op.
TEST(InferredRolesTest, OverlapMovesTheSameNodes) {
  auto explicit_graph = BuildToyTrainingGraph(ChainsOfEveryLength());
  auto bare_graph = BuildToyTrainingGraph(WithoutAnnotations(ChainsOfEveryLength()));
  ASSERT_TRUE(InferMissingRoles(*bare_graph, Spec(*bare_graph)).ok());
  Status status = RewriteWithOverlap(*explicit_graph);
  ASSERT_TRUE(status.ok()) << status.ToString();
  status = RewriteWithOverlap(*bare_graph);
  ASSERT_TRUE(status.ok()) << status.ToString();
  const std::vector<std::string> schedule = Schedule(*explicit_graph);
  EXPECT_EQ(Schedule(*bare_graph), schedule);
  auto position = [&](const std::string& name) {
    return std::find(schedule.begin(), schedule.end(), name) - schedule.begin();
  };
  EXPECT_EQ(position("p3.c1"), position("p3.graw") + 1);
  EXPECT_EQ(position("p3.c3"), position("p3.graw") + 3);
}

// Shape inference that finds the graph inconsistent is an error naming the node, not a silent
// "backward".
TEST(InferredRolesTest, InconsistentShapesAreAnError) {
  auto bare_graph = BuildToyTrainingGraph(WithoutAnnotations({{{"p", DataType::kFloat32, 64, 1}}}));
  // The broadcast of a scalar by 64 ones recorded as 63 elements.
  bare_graph->SetValueType(bare_graph->FindValue("p.graw"),
                           TensorType{DataType::kFloat32, std::vector<int64_t>{63}});
  StatusOr<std::vector<int64_t>> bits = InferRoleBits(*bare_graph, Spec(*bare_graph));
  ASSERT_FALSE(bits.ok());
  EXPECT_NE(bits.status().message().find("p.graw"), std::string_view::npos)
      << bits.status().message();
}

}  // namespace
}  // namespace zerograph
