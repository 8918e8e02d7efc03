#include "zerograph/passes/overlap.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "passes/toy_training_graph.h"
#include "zerograph/ir/graph.h"
#include "zerograph/passes/gradient_chain.h"
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

// The chains the sharding pass hands over give the rewrite the overlap pass makes walking them
// itself: two buckets (fp32, and bf16 whose fp32 gradient casts the handoff does not know), chains
// of every length.
TEST(OverlapTest, ChainsHandedOverFromShardingGiveTheSameRewrite) {
  const ToyConfig config = {{{"a", DataType::kFloat32, 64, 3},
                             {"h", DataType::kBFloat16, 100, 1},
                             {"b", DataType::kFloat32, 8, 0},
                             {"k", DataType::kBFloat16, 30, 2},
                             {"c", DataType::kFloat32, 16, 2}}};
  auto rewrite = [&](bool hand_over) -> StatusOr<std::unique_ptr<Graph>> {
    auto graph = BuildToyTrainingGraph(config);
    GradientChainHandoff handoff;
    PassPipeline pipeline(/*verify_each=*/true);
    auto& sharding = pipeline.AddPass<ShardingStage1Pass>(
        ShardingStage1Pass::Options{.nranks = 2, .master_weights = true, .master_grads = true});
    auto& overlap = pipeline.AddPass<OverlapPass>();
    if (hand_over) {
      sharding.HandOffChains(&handoff);
      overlap.TakeChainsFrom(&handoff);
    }
    ZG_RETURN_IF_ERROR(pipeline.Run(*graph).status());
    ZG_RETURN_IF_ERROR(CheckHazards(*graph));
    return graph;
  };
  StatusOr<std::unique_ptr<Graph>> walked = rewrite(false);
  ASSERT_TRUE(walked.ok()) << walked.status().ToString();
  StatusOr<std::unique_ptr<Graph>> handed = rewrite(true);
  ASSERT_TRUE(handed.ok()) << handed.status().ToString();
  EXPECT_EQ(Schedule(**handed), Schedule(**walked));
  std::vector<std::string> walked_streams, handed_streams;
  for (const Node* node : (*walked)->nodes()) walked_streams.emplace_back(node->stream());
  for (const Node* node : (*handed)->nodes()) handed_streams.emplace_back(node->stream());
  EXPECT_EQ(handed_streams, walked_streams);
}

// A chain handed over is taken as it is for the gradient it was put for, at its place; one put
// for another gradient is not, and that gradient's chain is walked.
TEST(OverlapTest, TakesAHandedOverChainOnlyForItsGradient) {
  for (bool matching : {true, false}) {
    auto graph = BuildToyTrainingGraph({{{"p", DataType::kFloat32, 64, 2}}});
    ASSERT_TRUE(Rewrite(*graph, /*overlap=*/false).ok());
    const Value* gradient = graph->FindValue("fused@bucket0.grad")->producer()->input(0);
    GradientChainHandoff handoff;
    // Handed over: the gradient is ready where it is made, after an empty chain.
    handoff.Put(matching ? gradient : graph->FindValue("busy0"), gradient->producer(), {});
    OverlapPass overlap;
    overlap.TakeChainsFrom(&handoff);
    ASSERT_TRUE(overlap.Run(*graph).ok());
    const std::vector<std::string> schedule = Schedule(*graph);
    const auto c1 = std::find(schedule.begin(), schedule.end(), "p.c1");
    ASSERT_NE(c1, schedule.end());
    if (matching) {
      EXPECT_NE(overlap.StatsString().find("moved after their backward op: 0\n"), std::string::npos)
          << overlap.StatsString();
      EXPECT_EQ(*(c1 - 1), "busy0");  // where sharding left it
    } else {
      EXPECT_NE(overlap.StatsString().find("moved after their backward op: 2\n"), std::string::npos)
          << overlap.StatsString();
      EXPECT_EQ(*(c1 - 1), "p.graw");  // moved after its backward op
    }
  }
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
