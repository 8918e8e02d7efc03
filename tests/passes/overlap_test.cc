#include "zerograph/passes/overlap.h"

#include <gtest/gtest.h>

#include "passes/toy_training_graph.h"
#include "zerograph/ir/graph.h"
#include "zerograph/passes/hazard_check.h"
#include "zerograph/passes/pass_pipeline.h"
#include "zerograph/passes/sharding_stage1.h"

namespace zerograph {
namespace {

// Each node named by its first output, in schedule order.
std::vector<std::string> Schedule(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node* node : graph.nodes()) names.emplace_back(node->output(0)->name());
  return names;
}

Status Rewrite(Graph& graph, bool overlap) {
  PassPipeline pipeline(/*verify_each=*/true);
  pipeline.AddPass<ShardingStage1Pass>(ShardingStage1Pass::Options{
      /*nranks=*/2, /*comm_buffer_mb=*/256, BucketOrder::kGradientReady});
  if (overlap) pipeline.AddPass<OverlapPass>();
  StatusOr<bool> changed = pipeline.Run(graph);
  if (!changed.ok()) return changed.status();
  return CheckHazards(graph);
}

std::vector<std::string> Chain(const std::string& param, int length) {
  std::vector<std::string> names;
  for (int c = 1; c <= length; ++c) names.push_back(StrCat(param, ".c", c));
  return names;
}

// The schedule of a one-parameter graph whose gradient passes a chain of `length` nodes, after
// sharding and overlap: the chain follows its backward op, fusion and reduce-scatter follow the
// chain, and the rest of backward (busy0) runs beside the reduce-scatter.
std::vector<std::string> ExpectedOverlapped(int length) {
  std::vector<std::string> expected = {"p",    "x.sum",     "p.sum", "acc0",
                                       "loss", "loss.grad", "p.graw"};
  for (const std::string& name : Chain("p", length)) expected.push_back(name);
  for (const char* name : {"fused@bucket0.grad", "shard@bucket0.grad", "busy0", "shard@bucket0",
                           "shard@bucket0.state0", "shard@bucket0.state1", "shard@bucket0.new",
                           "shard@bucket0.ready", "fused@bucket0.new", "p.new"}) {
    expected.push_back(name);
  }
  return expected;
}

class OverlapChainTest : public ::testing::TestWithParam<int> {};

// Chains of length 0, 1, 2 and 3 move right after their backward op, in order; the seed is wrong
// from length 2 on (it inserts the fusion after the first chain node).
TEST_P(OverlapChainTest, ChainMovesAfterBackwardOp) {
  const int length = GetParam();
  auto graph = BuildToyTrainingGraph({{{"p", DataType::kFloat32, 64, length}}});
  Status status = Rewrite(*graph, /*overlap=*/true);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Schedule(*graph), ExpectedOverlapped(length));
  Node* reduce_scatter = graph->FindValue("shard@bucket0.grad")->producer();
  EXPECT_EQ(reduce_scatter->stream(), kCommStream);
  EXPECT_EQ(graph->FindValue("fused@bucket0.new")->producer()->stream(), kCommStream);
  EXPECT_EQ(graph->FindValue("shard@bucket0.ready")->producer()->stream(), kCommStream);
  EXPECT_EQ(graph->FindValue("shard@bucket0.new")->producer()->stream(), kComputeStream);
}

INSTANTIATE_TEST_SUITE_P(Lengths, OverlapChainTest, ::testing::Values(0, 1, 2, 3));

// Without overlap the chain stays and communication follows backward, all on one stream.
TEST(OverlapTest, WithoutOverlapCommunicationFollowsBackward) {
  auto graph = BuildToyTrainingGraph({{{"p", DataType::kFloat32, 64, 2}}});
  Status status = Rewrite(*graph, /*overlap=*/false);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Schedule(*graph),
            (std::vector<std::string>{"p", "x.sum", "p.sum", "acc0", "loss", "loss.grad", "p.graw",
                                      "busy0", "p.c1", "p.c2", "fused@bucket0.grad",
                                      "shard@bucket0.grad", "shard@bucket0", "shard@bucket0.state0",
                                      "shard@bucket0.state1", "shard@bucket0.new",
                                      "shard@bucket0.ready", "fused@bucket0.new", "p.new"}));
  for (const Node* node : graph->nodes()) EXPECT_EQ(node->stream(), kComputeStream);
}

// With two gradients, fusion waits for the later chain end: p0's gradient (chain 3) is produced
// after p1's (chain 0), since backward runs last layer first.
TEST(OverlapTest, FusionFollowsLatestChainEnd) {
  auto graph = BuildToyTrainingGraph(
      {{{"p0", DataType::kFloat32, 64, 3}, {"p1", DataType::kFloat32, 64, 0}}});
  Status status = Rewrite(*graph, /*overlap=*/true);
  ASSERT_TRUE(status.ok()) << status.ToString();
  std::vector<std::string> schedule = Schedule(*graph);
  auto position = [&](const std::string& name) {
    return std::find(schedule.begin(), schedule.end(), name) - schedule.begin();
  };
  EXPECT_EQ(position("p0.c1"), position("p0.graw") + 1);
  EXPECT_EQ(position("p0.c3"), position("p0.graw") + 3);
  EXPECT_EQ(position("fused@bucket0.grad"), position("p0.c3") + 1);
  EXPECT_EQ(position("shard@bucket0.grad"), position("p0.c3") + 2);
  EXPECT_LT(position("p1.graw"), position("p0.graw"));
  EXPECT_EQ(position("busy0"), position("shard@bucket0.grad") + 1);
}

// The parameter views of the next step wait for this step's all-gather.
TEST(OverlapTest, NextStepWaitsForAllGather) {
  auto graph = BuildToyTrainingGraph({{{"p", DataType::kFloat32, 64, 1}}});
  ASSERT_TRUE(Rewrite(*graph, /*overlap=*/true).ok());
  Node* views = graph->FindValue("p")->producer();
  auto waits = views->GetStrings(kAfterPreviousStepAttr);
  ASSERT_TRUE(waits.has_value());
  ASSERT_EQ(waits->size(), 1u);
  EXPECT_EQ((*waits)[0], graph->FindValue("fused@bucket0.new")->producer()->name());
}

// Overlap needs buckets to work on.
TEST(OverlapTest, RejectsGraphWithoutBuckets) {
  auto graph = BuildToyTrainingGraph({{{"p", DataType::kFloat32, 64}}});
  OverlapPass pass;
  StatusOr<bool> result = pass.Run(*graph);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("sharding-stage1"), std::string_view::npos);
}

}  // namespace
}  // namespace zerograph
