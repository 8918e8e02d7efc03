#include "zerograph/passes/gradient_control.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "passes/toy_training_graph.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/passes/hazard_check.h"
#include "zerograph/passes/overlap.h"
#include "zerograph/passes/pass_pipeline.h"
#include "zerograph/passes/sharding_stage1.h"

namespace zerograph {
namespace {

ToyConfig TwoParams() { return {{{"a", DataType::kFloat32, 64}, {"b", DataType::kFloat32, 8}}}; }

// Runs sharding (when nranks > 0), overlap and gradient control as rewrite-graph does.
StatusOr<bool> Rewrite(Graph& graph, int64_t nranks, GradientControlPass::Options options) {
  PassPipeline pipeline(/*verify_each=*/true);
  if (nranks > 0) {
    pipeline.AddPass<ShardingStage1Pass>(ShardingStage1Pass::Options{.nranks = nranks});
    pipeline.AddPass<OverlapPass>();
  }
  pipeline.AddPass<GradientControlPass>(options);
  ZG_ASSIGN_OR_RETURN(bool changed, pipeline.Run(graph));
  ZG_RETURN_IF_ERROR(CheckHazards(graph));
  return changed;
}

std::vector<const Node*> NodesOf(const Graph& graph, std::string_view op) {
  std::vector<const Node*> found;
  for (const Node* node : graph.nodes()) {
    if (node->op_type() == op) found.push_back(node);
  }
  return found;
}

// Sharded: the shards' squares are summed, all-reduced on the collectives' stream, and the one
// control feeds every update as its last input.
TEST(GradientControlTest, ShardedGradientsAreSummedAcrossRanks) {
  auto graph = BuildToyTrainingGraph(TwoParams());
  StatusOr<bool> changed = Rewrite(*graph, 2, {.max_norm = 1.0f});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_EQ(NodesOf(*graph, "SumOfSquares").size(), 1u);
  const std::vector<const Node*> reduces = NodesOf(*graph, "AllReduce");
  ASSERT_EQ(reduces.size(), 1u);
  EXPECT_EQ(reduces[0]->GetString("reduce_op"), "sum");
  EXPECT_EQ(reduces[0]->stream(), NodesOf(*graph, "ReduceScatter")[0]->stream());
  const std::vector<const Node*> controls = NodesOf(*graph, "GradientControl");
  ASSERT_EQ(controls.size(), 1u);
  EXPECT_EQ(controls[0]->GetFloat("max_norm"), 1.0f);
  EXPECT_EQ(controls[0]->input(0), reduces[0]->output(0));
  EXPECT_TRUE(controls[0]->output(0)->is_graph_output());
  const std::vector<const Node*> updates = NodesOf(*graph, "AdamW");
  ASSERT_FALSE(updates.empty());
  for (const Node* update : updates) {
    EXPECT_EQ(update->input(update->num_inputs() - 1), controls[0]->output(0)) << update->name();
    EXPECT_TRUE(controls[0]->IsBefore(*update));
  }
}

// Unsharded: every gradient is whole, summed once, with no collective.
TEST(GradientControlTest, WholeGradientsCountOnce) {
  auto graph = BuildToyTrainingGraph(TwoParams());
  StatusOr<bool> changed = Rewrite(*graph, 0, {.max_norm = 2.0f});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  const std::vector<const Node*> sums = NodesOf(*graph, "SumOfSquares");
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0]->num_inputs(), 2u);
  EXPECT_TRUE(NodesOf(*graph, "AllReduce").empty());
}

// Loss scaling: the scale and its counter are inputs, their new values state the binding names.
TEST(GradientControlTest, LossScalingBindsTheScalerState) {
  auto graph = BuildToyTrainingGraph(TwoParams());
  for (const char* name : {"zg.loss_scale", "zg.loss_scale.good_steps"}) {
    const float value = 1024.0f;
    graph->AddInitializer(name, DataType::kFloat32, {},
                          std::as_bytes(std::span<const float>(&value, 1)));
  }
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  TrainingSpec written = **spec;
  written.loss_scaling = TrainingSpec::LossScaling{"zg.loss_scale", "zg.loss_scale.good_steps"};
  WriteTrainingSpec(written, *graph);

  StatusOr<bool> changed = Rewrite(*graph, 2, {.growth_interval = 7});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  const Node* control = NodesOf(*graph, "GradientControl").at(0);
  ASSERT_EQ(control->num_inputs(), 3u);
  EXPECT_EQ(control->input(1)->name(), "zg.loss_scale");
  EXPECT_EQ(control->GetInt("growth_interval"), 7);
  EXPECT_EQ(control->GetFloat("max_norm"), 0.0f);
  StatusOr<std::optional<TrainingSpec>> after = ReadTrainingSpec(*graph);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  std::map<std::string, std::string> binding((*after)->state_binding.begin(),
                                             (*after)->state_binding.end());
  EXPECT_EQ(binding[std::string(control->output(1)->name())], "zg.loss_scale");
  EXPECT_EQ(binding[std::string(control->output(2)->name())], "zg.loss_scale.good_steps");
}

TEST(GradientControlTest, NothingToDoLeavesTheGraph) {
  auto graph = BuildToyTrainingGraph(TwoParams());
  const size_t nodes = graph->num_nodes();
  StatusOr<bool> changed = Rewrite(*graph, 0, {});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(graph->num_nodes(), nodes);
}

// Controlled, then sharded in another rewrite: the control stays, reading the shards' sums, and
// the sums of the whole gradients it read before are gone.
TEST(GradientControlTest, AControlMadeBeforeShardingIsRebuilt) {
  auto graph = BuildToyTrainingGraph(TwoParams());
  ASSERT_TRUE(Rewrite(*graph, 0, {.max_norm = 1.0f}).ok());
  StatusOr<bool> changed = Rewrite(*graph, 2, {});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  const std::vector<const Node*> controls = NodesOf(*graph, "GradientControl");
  ASSERT_EQ(controls.size(), 1u);
  EXPECT_EQ(controls[0]->GetFloat("max_norm"), 1.0f);
  const std::vector<const Node*> sums = NodesOf(*graph, "SumOfSquares");
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0]->input(0)->producer()->op_type(), "ReduceScatter");
  ASSERT_EQ(NodesOf(*graph, "AllReduce").size(), 1u);
  EXPECT_EQ(controls[0]->input(0), NodesOf(*graph, "AllReduce")[0]->output(0));
  for (const Node* update : NodesOf(*graph, "AdamW")) {
    EXPECT_EQ(update->input(update->num_inputs() - 1), controls[0]->output(0)) << update->name();
  }
}

}  // namespace
}  // namespace zerograph
