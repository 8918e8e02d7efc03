#include "zerograph/passes/hazard_check.h"

#include <gtest/gtest.h>

#include "zerograph/ir/graph.h"
#include "zerograph/models/mlp.h"
#include "zerograph/passes/overlap.h"
#include "zerograph/passes/pass_pipeline.h"
#include "zerograph/passes/sharding_stage1.h"

namespace zerograph {
namespace {

class HazardCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = BuildMlpTrainingGraph(MlpDemoConfig());
    ASSERT_TRUE(graph.ok());
    graph_ = std::move(graph).value();
    PassPipeline pipeline(/*verify_each=*/true);
    pipeline.AddPass<ShardingStage1Pass>(ShardingStage1Pass::Options{/*nranks=*/2});
    pipeline.AddPass<OverlapPass>();
    ASSERT_TRUE(pipeline.Run(*graph_).ok());
    ASSERT_TRUE(CheckHazards(*graph_).ok());
  }
  Node* Producer(const char* value) { return graph_->FindValue(value)->producer(); }
  void ExpectHazard(const std::vector<std::string>& fragments) {
    Status status = CheckHazards(*graph_);
    ASSERT_FALSE(status.ok()) << "hazard not found";
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    for (const std::string& fragment : fragments) {
      EXPECT_NE(status.message().find(fragment), std::string_view::npos) << status.message();
    }
  }
  std::unique_ptr<Graph> graph_;
};

// An AllGather that reads the shard before the update could gather stale parameters.
TEST_F(HazardCheckTest, GatherBeforeUpdate) {
  graph_->SetInput(Producer("fused@bucket0.new"), 0, graph_->FindValue("shard@bucket0"));
  ExpectHazard(
      {"does not wait for bucket 0's last update", "zg.bucket0.all_gather", "zg.bucket0.update"});
}

// A parameter read after the update races the in-place all-gather.
TEST_F(HazardCheckTest, ParameterReadAfterUpdate) {
  Node* reader =
      graph_->AddNode("Identity", "", {graph_->FindValue("w1")}, {"late"}, "late_reader");
  (void)reader;
  ExpectHazard({"'late_reader' (Identity) reads parameter 'w1'", "zg.bucket0.all_gather"});
}

// Collectives on two streams could be issued in different orders on different ranks.
TEST_F(HazardCheckTest, CollectivesOnTwoStreams) {
  Producer("shard@bucket0.grad")->SetStream(kComputeStream);
  ExpectHazard({"zg.bucket0.reduce_scatter", "zg.bucket0.all_gather", "different orders"});
}

// Without the cross-step wait, the next forward could read parameters mid-gather.
TEST_F(HazardCheckTest, MissingCrossStepWait) {
  ASSERT_TRUE(Producer("w0")->RemoveAttribute(kAfterPreviousStepAttr));
  ExpectHazard({"zg.bucket0.param_views", "without waiting for", "zg.bucket0.all_gather"});
}

// A collective built for another rank count is refused.
TEST_F(HazardCheckTest, WrongRankCount) {
  Producer("shard@bucket0.grad")->SetInt("nranks", 4);
  ExpectHazard({"is for 4 ranks", "rewritten for 2"});
}

}  // namespace
}  // namespace zerograph
