#include "zerograph/passes/sharding_stage1.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "passes/toy_training_graph.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/role_inference.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/verify.h"
#include "zerograph/models/mlp.h"
#include "zerograph/passes/hazard_check.h"
#include "zerograph/passes/overlap.h"
#include "zerograph/passes/pass_pipeline.h"

namespace zerograph {
namespace {

std::unique_ptr<Graph> Demo() {
  auto graph = BuildMlpTrainingGraph(MlpDemoConfig());
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

struct Rewrite {
  Status status;
  LayoutManifest layout;
  std::string report;
};

Rewrite Shard(Graph& graph, int64_t nranks, BucketOrder order = BucketOrder::kParameter,
              double comm_buffer_mb = 256,
              LayoutManifest::Alignment align = LayoutManifest::Alignment::kSeed) {
  PassPipeline pipeline(/*verify_each=*/true);
  auto& pass = pipeline.AddPass<ShardingStage1Pass>(
      ShardingStage1Pass::Options{nranks, comm_buffer_mb, order, align});
  StatusOr<bool> changed = pipeline.Run(graph);
  Rewrite result{changed.ok() ? Status::Ok() : changed.status(), pass.layout(), pipeline.Report()};
  if (result.status.ok()) result.status = CheckHazards(graph);
  return result;
}

std::map<std::string, int> CountOps(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node* node : graph.nodes()) ++counts[std::string(node->op_type())];
  return counts;
}

// The element ranges of each parameter a rank owns: [r·S, (r+1)·S) intersected with the params.
std::map<std::string, std::pair<int64_t, int64_t>> Owned(const LayoutManifest::Bucket& bucket,
                                                         int64_t rank) {
  std::map<std::string, std::pair<int64_t, int64_t>> owned;
  const int64_t begin = rank * bucket.shard_size;
  const int64_t end = begin + bucket.shard_size;
  for (const LayoutManifest::Param& param : bucket.params) {
    const int64_t lo = std::max(begin, param.offset);
    const int64_t hi = std::min(end, param.offset + param.numel);
    if (lo < hi) owned[param.name] = {lo - param.offset, hi - param.offset};
  }
  return owned;
}

// The seed's worked example (seed-spec §2.5): w0 [16,16] and w1 [16,8], fp32, 2 ranks: one bucket
// of 384 elements, S = 192; rank 0 holds w0[0:192), rank 1 w0[192:256) and all of w1.
TEST(ShardingStage1Test, SeedWorkedExample) {
  auto graph = Demo();
  Rewrite rewrite = Shard(*graph, 2);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.buckets.size(), 1u);
  const LayoutManifest::Bucket& bucket = rewrite.layout.buckets[0];
  EXPECT_EQ(bucket.total, 384);
  EXPECT_EQ(bucket.shard_size, 192);
  ASSERT_EQ(bucket.params.size(), 2u);
  EXPECT_EQ(bucket.params[0].name, "w0");
  EXPECT_EQ(bucket.params[0].offset, 0);
  EXPECT_EQ(bucket.params[1].name, "w1");
  EXPECT_EQ(bucket.params[1].offset, 256);
  using Range = std::pair<int64_t, int64_t>;
  EXPECT_EQ(Owned(bucket, 0), (std::map<std::string, Range>{{"w0", {0, 192}}}));
  EXPECT_EQ(Owned(bucket, 1), (std::map<std::string, Range>{{"w0", {192, 256}}, {"w1", {0, 128}}}));
  EXPECT_EQ(bucket.params[0].states, (std::vector<std::string>{"w0.m1", "w0.m2"}));
  EXPECT_TRUE(rewrite.layout.whole.empty());
}

// The rewritten graph has one fused update per bucket between the collectives, and the parameters
// are views of a fused initializer holding their bytes.
TEST(ShardingStage1Test, RewritesIntoFusedBucket) {
  auto graph = Demo();
  std::vector<std::byte> w1_bytes;
  {
    auto bytes = graph->FindValue("w1")->initializer()->Bytes();
    ASSERT_TRUE(bytes.ok());
    w1_bytes.assign(bytes->begin(), bytes->end());
  }
  ASSERT_TRUE(Shard(*graph, 2).status.ok());
  std::map<std::string, int> ops = CountOps(*graph);
  EXPECT_EQ(ops["CoalesceTensors"], 1);
  EXPECT_EQ(ops["ReduceScatter"], 1);
  EXPECT_EQ(ops["AllGather"], 1);
  EXPECT_EQ(ops["Nop"], 1);
  EXPECT_EQ(ops["TensorViews"], 2);
  EXPECT_EQ(ops["LocalShard"], 3);
  EXPECT_EQ(ops["AdamW"], 1);

  Value* fused = graph->FindValue("fused@bucket0");
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(fused->initializer(), nullptr);
  auto fused_bytes = fused->initializer()->Bytes();
  ASSERT_TRUE(fused_bytes.ok());
  ASSERT_EQ(fused_bytes->size(), 384u * 4);
  EXPECT_EQ(std::memcmp(fused_bytes->data() + 256 * 4, w1_bytes.data(), w1_bytes.size()), 0);

  Value* w0 = graph->FindValue("w0");
  ASSERT_NE(w0, nullptr);
  EXPECT_EQ(w0->initializer(), nullptr);
  EXPECT_EQ(w0->producer()->op_type(), "TensorViews");
  EXPECT_EQ(graph->FindValue("w0.m1"), nullptr);
  ASSERT_NE(graph->FindValue("w0.new"), nullptr);
  EXPECT_TRUE(graph->FindValue("w0.new")->is_graph_output());

  auto spec = ReadTrainingSpec(*graph);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ((*spec)->nranks, 2);
  std::map<std::string, std::string> binding((*spec)->state_binding.begin(),
                                             (*spec)->state_binding.end());
  EXPECT_EQ(binding["fused@bucket0.new"], "fused@bucket0");
  EXPECT_EQ(binding["shard@bucket0.state0.new"], "fused@bucket0.state0");
  EXPECT_EQ(binding.count("w0.new"), 0u);
  auto layout = LayoutManifest::FromJson(*(*spec)->layout);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
}

// The sharded update keeps the optimizer's attributes: AdamW's mode and bias correction (ONNX
// Runtime's Hugging Face form) reach the fused node.
TEST(ShardingStage1Test, CarriesOptimizerAttributes) {
  auto graph = Demo();
  for (Node* node : graph->nodes()) {
    if (node->op_type() != "AdamW") continue;
    node->SetInt("adam_mode", 1);
    node->SetInt("correct_bias", 0);
    node->SetFloat("beta2", 0.98f);
  }
  ASSERT_TRUE(Shard(*graph, 2).status.ok());
  int updates = 0;
  for (const Node* node : graph->nodes()) {
    if (node->op_type() != "AdamW") continue;
    ++updates;
    EXPECT_EQ(node->GetInt("adam_mode"), 1);
    EXPECT_EQ(node->GetInt("correct_bias"), 0);
    EXPECT_EQ(node->GetFloat("beta2"), 0.98f);
  }
  EXPECT_EQ(updates, 1);
}

// The optimizer's control input (GradientControl's [3]) belongs to no parameter: the fused update
// takes it as its last input, after the shards of the parameters, gradients and states.
TEST(ShardingStage1Test, CarriesOptimizerControl) {
  auto graph = Demo();
  Value* control =
      graph->AddInput("control", TensorType{DataType::kFloat32, std::vector<int64_t>{3}});
  for (Node* node : graph->nodes()) {
    if (node->op_type() == "AdamW") graph->AppendInput(node, control);
  }
  ASSERT_TRUE(Verify(*graph).ok());
  ASSERT_TRUE(Shard(*graph, 2).status.ok());
  int updates = 0;
  for (const Node* node : graph->nodes()) {
    if (node->op_type() != "AdamW") continue;
    ++updates;
    ASSERT_EQ(node->num_inputs(), 2u + 4u + 1u);  // lr, step; X, G, M, V shards; control
    EXPECT_EQ(node->input(6), control);
    EXPECT_EQ(node->num_outputs(), 3u);
  }
  EXPECT_EQ(updates, 1);
}

// With 3 ranks the parameters are padded (fp32 granularity 48) and the padding is zero.
TEST(ShardingStage1Test, PaddingIsZero) {
  auto graph = Demo();
  Rewrite rewrite = Shard(*graph, 3);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  const LayoutManifest::Bucket& bucket = rewrite.layout.buckets[0];
  EXPECT_EQ(bucket.params[0].padded, 288);
  EXPECT_EQ(bucket.params[1].offset, 288);
  EXPECT_EQ(bucket.params[1].padded, 144);
  EXPECT_EQ(bucket.total, 432);
  EXPECT_EQ(bucket.shard_size, 144);
  auto bytes = graph->FindValue("fused@bucket0")->initializer()->Bytes();
  ASSERT_TRUE(bytes.ok());
  for (int64_t i = 256; i < 288; ++i) {
    float value;
    std::memcpy(&value, bytes->data() + i * 4, 4);
    ASSERT_EQ(value, 0.0f) << "element " << i;
  }
  EXPECT_NE(rewrite.report.find("padding: 192 bytes"), std::string::npos) << rewrite.report;
}

// fp16 pads to 64·N elements: a 100-element fp16 parameter takes 128 on 2 ranks.
TEST(ShardingStage1Test, Fp16Granularity) {
  auto graph = BuildToyTrainingGraph({{{"h", DataType::kFloat16, 100}}});
  Rewrite rewrite = Shard(*graph, 2);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.buckets.size(), 1u);
  EXPECT_EQ(rewrite.layout.buckets[0].dtype, DataType::kFloat16);
  EXPECT_EQ(rewrite.layout.buckets[0].params[0].padded, 128);
  EXPECT_EQ(rewrite.layout.buckets[0].shard_size, 64);
}

// Parameters of different dtypes never share a bucket.
TEST(ShardingStage1Test, DtypesSeparate) {
  auto graph = BuildToyTrainingGraph({{{"a", DataType::kFloat32, 64},
                                       {"b", DataType::kFloat16, 64},
                                       {"c", DataType::kFloat32, 64}}});
  Rewrite rewrite = Shard(*graph, 2);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.buckets.size(), 2u);
  EXPECT_EQ(rewrite.layout.buckets[0].params.size(), 2u);  // a and c
  EXPECT_EQ(rewrite.layout.buckets[0].dtype, DataType::kFloat32);
  EXPECT_EQ(rewrite.layout.buckets[1].params[0].name, "b");
}

// Boundary pair at the bucket limit (1 MiB): two fp32 parameters of 512 KiB fill a bucket
// exactly, so the third starts a new one ...
TEST(ShardingStage1Test, SplitAtLimit) {
  const int64_t half_mib = 131072;
  auto graph = BuildToyTrainingGraph({{{"p0", DataType::kFloat32, half_mib},
                                       {"p1", DataType::kFloat32, half_mib},
                                       {"p2", DataType::kFloat32, 16}}});
  Rewrite rewrite = Shard(*graph, 2, BucketOrder::kParameter, /*comm_buffer_mb=*/1);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.buckets.size(), 2u);
  EXPECT_EQ(rewrite.layout.buckets[0].params.size(), 2u);
  EXPECT_EQ(rewrite.layout.buckets[1].params[0].name, "p2");
}

// ... while one element less keeps the bucket open and the third parameter, crossing the
// limit, stays in it (the seed's rule).
TEST(ShardingStage1Test, CrossingParameterStays) {
  const int64_t half_mib = 131072;
  auto graph = BuildToyTrainingGraph({{{"p0", DataType::kFloat32, half_mib - 1},
                                       {"p1", DataType::kFloat32, half_mib},
                                       {"p2", DataType::kFloat32, 16}}});
  Rewrite rewrite = Shard(*graph, 2, BucketOrder::kParameter, /*comm_buffer_mb=*/1);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.buckets.size(), 1u);
  EXPECT_EQ(rewrite.layout.buckets[0].params.size(), 3u);
}

// Gradient-ready order fills the first bucket with the gradients backward produces first (the
// last parameters), so its reduce-scatter can start early; parameter order follows the seed.
TEST(ShardingStage1Test, BucketOrderFollowsGradientReadiness) {
  const int64_t half_mib = 131072;
  ToyConfig config{{{"p0", DataType::kFloat32, 2 * half_mib},
                    {"p1", DataType::kFloat32, 2 * half_mib},
                    {"p2", DataType::kFloat32, 2 * half_mib}}};
  auto ready = BuildToyTrainingGraph(config);
  Rewrite by_ready = Shard(*ready, 2, BucketOrder::kGradientReady, 1);
  ASSERT_TRUE(by_ready.status.ok()) << by_ready.status.ToString();
  ASSERT_EQ(by_ready.layout.buckets.size(), 3u);
  EXPECT_EQ(by_ready.layout.buckets[0].params[0].name, "p2");
  EXPECT_EQ(by_ready.layout.buckets[2].params[0].name, "p0");
  auto seed = BuildToyTrainingGraph(config);
  Rewrite by_param = Shard(*seed, 2, BucketOrder::kParameter, 1);
  ASSERT_TRUE(by_param.status.ok());
  EXPECT_EQ(by_param.layout.buckets[0].params[0].name, "p0");
}

// Roles inferred for a graph without `__op_role` give the same rewrite as explicit roles.
TEST(ShardingStage1Test, SameRewriteWithInferredRoles) {
  ToyConfig config{{{"p0", DataType::kFloat32, 64, 2}, {"p1", DataType::kFloat32, 96, 1}}};
  auto explicit_roles = BuildToyTrainingGraph(config);
  config.roles = false;
  auto inferred = BuildToyTrainingGraph(config);
  auto spec = ReadTrainingSpec(*inferred);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  ASSERT_TRUE(InferMissingRoles(*inferred, **spec).ok());
  Rewrite a = Shard(*explicit_roles, 2, BucketOrder::kGradientReady);
  Rewrite b = Shard(*inferred, 2, BucketOrder::kGradientReady);
  ASSERT_TRUE(a.status.ok()) << a.status.ToString();
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(a.layout, b.layout);
  std::vector<std::string> schedule_a, schedule_b;
  for (const Node* node : explicit_roles->nodes()) schedule_a.emplace_back(node->op_type());
  for (const Node* node : inferred->nodes()) schedule_b.emplace_back(node->op_type());
  EXPECT_EQ(schedule_a, schedule_b);
}

// Given the spec as it was read before (ShardingStage1Pass::UseLoadedSpec), the pass rewrites the
// graph as it does reading the spec itself; the spec is taken once, and a later run reads it.
TEST(ShardingStage1Test, TakesTheSpecReadBefore) {
  auto reading = Demo();
  auto given = Demo();
  Rewrite read = Shard(*reading, 2, BucketOrder::kGradientReady);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();

  StatusOr<std::optional<ResolvedTrainingSpec>> spec =
      ReadResolvedTrainingSpec(*given, BindingNames::kViewed);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  PassPipeline pipeline(/*verify_each=*/true);
  auto& pass = pipeline.AddPass<ShardingStage1Pass>(
      ShardingStage1Pass::Options{.nranks = 2, .bucket_order = BucketOrder::kGradientReady});
  pass.UseLoadedSpec(std::move(**spec));
  StatusOr<bool> changed = pipeline.Run(*given);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(pass.layout(), read.layout);
  EXPECT_EQ(given->GetMetadata("zerograph.state_binding"),
            reading->GetMetadata("zerograph.state_binding"));
  EXPECT_EQ(CountOps(*given), CountOps(*reading));
  // Taken: a second run reads the (rewritten) graph's spec, and refuses it as rewritten.
  const StatusOr<bool> again = pass.Run(*given);
  EXPECT_NE(again.status().message().find("already rewritten"), std::string::npos)
      << again.status().ToString();
}

// A parameter that cannot be sharded (fp64) keeps its own update with an averaged gradient.
TEST(ShardingStage1Test, UnshardableParameterStaysWhole) {
  auto graph = BuildToyTrainingGraph(
      {{{"a", DataType::kFloat32, 64}, {"d", DataType::kFloat64, 8}}, /*adamw=*/false});
  Rewrite rewrite = Shard(*graph, 2);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.whole.size(), 1u);
  EXPECT_EQ(rewrite.layout.whole[0].name, "d");
  EXPECT_NE(rewrite.layout.whole[0].reason.find("double"), std::string::npos);
  std::map<std::string, int> ops = CountOps(*graph);
  EXPECT_EQ(ops["AllReduce"], 1);
  EXPECT_EQ(ops["SGD"], 2);  // the fused one and the one left for d
  Value* d_new = graph->FindValue("d.new");
  ASSERT_NE(d_new, nullptr);
  const Node* update = d_new->producer();
  EXPECT_EQ(update->num_inputs(), 3u);
  EXPECT_EQ(update->input(2)->producer()->op_type(), "AllReduce");
  EXPECT_NE(rewrite.report.find("d: element type double"), std::string::npos) << rewrite.report;
}

// A state update that no known optimizer makes (an op of another domain with the optimizer role,
// its output bound as new state) keeps its parameter whole and gets the gradient averaged over the
// ranks; the optimizer-role nodes of the gradient chains, which make no graph output, do not.
TEST(ShardingStage1Test, UnknownOptimizerKeepsItsParameterWhole) {
  auto graph = BuildToyTrainingGraph({{{"a", DataType::kFloat32, 64, /*chain=*/2}}});
  GraphBuilder b(*graph);
  Value* u = b.Zeros("u", DataType::kFloat32, {8});
  b.SetRole(OpRole::kBackward);
  Value* u_grad = b.Op("Neg", {graph->FindValue("loss.grad")}, "u.grad");
  b.SetRole(OpRole::kOptimize);
  Value* u_new = b.Op({"com.example", "Lion"}, {u, u_grad}, "u.new");
  b.Output(b.SetType(u_new, DataType::kFloat32, {8}));
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  (*spec)->state_binding.emplace_back("u.new", "u");
  WriteTrainingSpec(**spec, *graph);

  Rewrite rewrite = Shard(*graph, 2);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.whole.size(), 1u);
  EXPECT_EQ(rewrite.layout.whole[0].name, "u");
  EXPECT_EQ(rewrite.layout.whole[0].reason, "optimizer Lion is not supported");
  EXPECT_EQ(CountOps(*graph)["AllReduce"], 1);
  EXPECT_EQ(graph->FindValue("u.new")->producer()->input(1)->producer()->op_type(), "AllReduce");
}

// Zero ranks, and more than an int holds, are refused.
TEST(ShardingStage1Test, RejectsRankCountsOutOfRange) {
  for (const int64_t nranks : {int64_t{0}, kMaxRanks + 1}) {
    auto graph = Demo();
    Rewrite rewrite = Shard(*graph, nranks);
    EXPECT_EQ(rewrite.status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(rewrite.status.message().find(
                  StrCat("--nranks must be from 1 to 2147483647, got ", nranks)),
              std::string_view::npos)
        << rewrite.status.message();
  }
}

// A graph without zerograph.loss is no training graph.
TEST(ShardingStage1Test, RejectsGraphWithoutLoss) {
  Graph graph;
  Value* x = graph.AddInput("x", TensorType{DataType::kFloat32, std::vector<int64_t>{4}});
  graph.AddOutput(graph.AddNode("Relu", "", {x}, {"y"}, "relu")->output(0));
  Rewrite rewrite = Shard(graph, 2);
  EXPECT_EQ(rewrite.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rewrite.status.message().find("zerograph.loss"), std::string_view::npos);
}

// One gradient feeding two optimizer updates is ambiguous and refused, naming both.
TEST(ShardingStage1Test, RejectsGradientFeedingTwoOptimizers) {
  auto graph = BuildToyTrainingGraph({{{"a", DataType::kFloat32, 64}}, /*adamw=*/false});
  Node* sgd = graph->FindValue("a.new")->producer();
  Value* extra = graph->AddInitializer("b", DataType::kFloat32, std::vector<int64_t>{64},
                                       std::vector<std::byte>(256));
  graph->AddNode("SGD", kZerographDomain, {sgd->input(0), extra, sgd->input(2)}, {"b.new"},
                 "second_sgd");
  Rewrite rewrite = Shard(*graph, 2);
  EXPECT_EQ(rewrite.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rewrite.status.message().find("feeds two optimizer updates"), std::string_view::npos);
  EXPECT_NE(rewrite.status.message().find(StrCat("('", sgd->name(), "' and 'second_sgd')")),
            std::string_view::npos)
      << rewrite.status.message();
}

// One parameter updated by two optimizer nodes is refused the same way.
TEST(ShardingStage1Test, RejectsParameterUpdatedByTwoOptimizers) {
  auto graph = BuildToyTrainingGraph({{{"a", DataType::kFloat32, 64}}, /*adamw=*/false});
  Node* sgd = graph->FindValue("a.new")->producer();
  Value* other_grad = graph->AddInitializer("other_grad", DataType::kFloat32,
                                            std::vector<int64_t>{64}, std::vector<std::byte>(256));
  graph->AddNode("SGD", kZerographDomain, {sgd->input(0), sgd->input(1), other_grad},
                 {"a.new.again"}, "second_sgd");
  Rewrite rewrite = Shard(*graph, 2);
  EXPECT_EQ(rewrite.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rewrite.status.message().find(StrCat("parameter '", sgd->input(1)->name(),
                                                 "' is updated by two optimizer nodes ('",
                                                 sgd->name(), "' and 'second_sgd')")),
            std::string_view::npos)
      << rewrite.status.message();
}

// A graph large enough that the candidates are swept and the gradient chains walked on several
// threads, whose optimizer nodes were made in the reverse of their schedule order: the
// parameters still fill the bucket in schedule order, each with its own bytes, and overlap moves
// every chain after its own backward op.
TEST(ShardingStage1Test, LargeGraphMadeOutOfScheduleOrder) {
  constexpr int kParams = 70'000;  // 3 nodes each
  auto graph = std::make_unique<Graph>();
  GraphBuilder b(*graph);
  Value* lr = b.Input("lr", DataType::kFloat32, {});
  Value* x = b.Input("x", DataType::kFloat32, {});
  Value* scale = b.Initializer("grad_scale", {1}, std::vector<float>{0.5f});
  b.SetRole(OpRole::kForward, /*is_loss=*/true);
  Value* loss = b.SetType(b.Op("Identity", {x}, "loss"), DataType::kFloat32, {});
  b.Output(loss);
  std::vector<Value*> params, grads;
  for (int i = 0; i < kParams; ++i) {
    params.push_back(b.Initializer(StrCat("p", i), {4}, std::vector<float>(4, float(i))));
  }
  b.SetRole(OpRole::kBackward);
  for (int i = 0; i < kParams; ++i) {
    Value* raw =
        b.SetType(b.Op("Identity", {loss}, StrCat("p", i, ".graw")), DataType::kFloat32, {4});
    b.SetRole(OpRole::kOptimize);
    grads.push_back(
        b.SetType(b.Op("Mul", {raw, scale}, StrCat("p", i, ".g")), DataType::kFloat32, {4}));
    b.SetRole(OpRole::kBackward);
  }
  TrainingSpec spec;
  spec.loss = "loss";
  spec.lr_input = "lr";
  graph->SetOpsetVersion(kZerographDomain, 1);
  Node* later = nullptr;
  for (int i = kParams - 1; i >= 0; --i) {
    later = graph->AddNode("SGD", kZerographDomain, {lr, params[i], grads[i]},
                           {StrCat("p", i, ".new")}, StrCat("sgd", i), later);
    later->SetRole(OpRole::kOptimize);
    graph->SetValueType(later->output(0), TensorType{DataType::kFloat32, std::vector<int64_t>{4}});
    graph->AddOutput(later->output(0));
    spec.state_binding.emplace_back(StrCat("p", i, ".new"), StrCat("p", i));
  }
  WriteTrainingSpec(spec, *graph);
  ASSERT_TRUE(Verify(*graph).ok());

  PassPipeline pipeline(/*verify_each=*/true);
  auto& sharding = pipeline.AddPass<ShardingStage1Pass>(
      ShardingStage1Pass::Options{4, 256, BucketOrder::kParameter});
  pipeline.AddPass<OverlapPass>();
  StatusOr<bool> changed = pipeline.Run(*graph);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_TRUE(CheckHazards(*graph).ok());

  const LayoutManifest& layout = sharding.layout();
  ASSERT_EQ(layout.buckets.size(), 1u);
  const LayoutManifest::Bucket& bucket = layout.buckets[0];
  ASSERT_EQ(bucket.params.size(), static_cast<size_t>(kParams));
  auto fused = graph->FindValue(bucket.param_buffer)->initializer()->Bytes();
  ASSERT_TRUE(fused.ok());
  for (int i = 0; i < kParams; ++i) {
    const LayoutManifest::Param& param = bucket.params[static_cast<size_t>(i)];
    ASSERT_EQ(param.name, StrCat("p", i));
    float values[4];
    std::memcpy(values, fused->data() + param.offset * 4, sizeof(values));
    for (float v : values) ASSERT_EQ(v, float(i)) << param.name;
    const Node* chain = graph->FindValue(StrCat("p", i, ".g"))->producer();
    ASSERT_EQ(chain->prev(), graph->FindValue(StrCat("p", i, ".graw"))->producer()) << param.name;
  }
}

// One optimizer node updating enough parameters that what each needs is read on several threads,
// in parts of the parameters that each meet the two dtypes in their own order: every parameter
// still lands in the bucket of its dtype, in parameter order.
TEST(ShardingStage1Test, ManyParametersOfOneOptimizerNodeGoByTheirKeys) {
  constexpr int kParams = 30'000;
  ToyConfig config;
  config.adamw = false;
  // Runs of 5000 of each dtype, so that parts starting anywhere disagree on which comes first.
  auto is_half = [](int i) { return (i / 5000) % 2 == 1; };
  for (int i = 0; i < kParams; ++i) {
    config.params.push_back({StrCat(is_half(i) ? "h" : "f", i),
                             is_half(i) ? DataType::kFloat16 : DataType::kFloat32, 4, i % 4});
  }
  auto graph = BuildToyTrainingGraph(config);
  Rewrite rewrite = Shard(*graph, 2);
  ASSERT_TRUE(rewrite.status.ok()) << rewrite.status.ToString();
  ASSERT_EQ(rewrite.layout.buckets.size(), 2u);
  for (const LayoutManifest::Bucket& bucket : rewrite.layout.buckets) {
    const bool half = bucket.dtype == DataType::kFloat16;
    ASSERT_EQ(bucket.params.size(), static_cast<size_t>(kParams / 2));
    int last = -1;
    for (const LayoutManifest::Param& param : bucket.params) {
      ASSERT_EQ(param.name[0], half ? 'h' : 'f') << param.name;
      const int index = std::stoi(param.name.substr(1));
      ASSERT_GT(index, last) << param.name;
      last = index;
    }
  }
}

// Rewriting a rewritten graph again is refused.
TEST(ShardingStage1Test, RejectsRewrittenGraph) {
  auto graph = Demo();
  ASSERT_TRUE(Shard(*graph, 2).status.ok());
  Rewrite again = Shard(*graph, 2);
  EXPECT_EQ(again.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(again.status.message().find("already rewritten"), std::string_view::npos);
}

// --align compact: many small parameters lie back to back and only the bucket's end is padded,
// so a bucket's padding stays under the granularity (16 * 8 fp32 elements on 8 ranks) however
// many parameters it holds; the seed's rule pads every one of them.
TEST(ShardingStage1Test, CompactAlignmentPadsOnlyTheBucketEnd) {
  ToyConfig config;
  for (int i = 0; i < 100; ++i)
    config.params.push_back({StrCat("p", i), DataType::kFloat32, 4 + i % 13});
  auto seed_graph = BuildToyTrainingGraph(config);
  auto compact_graph = BuildToyTrainingGraph(config);
  Rewrite seed = Shard(*seed_graph, 8);
  Rewrite compact =
      Shard(*compact_graph, 8, BucketOrder::kParameter, 256, LayoutManifest::Alignment::kCompact);
  ASSERT_TRUE(seed.status.ok()) << seed.status.ToString();
  ASSERT_TRUE(compact.status.ok()) << compact.status.ToString();
  ASSERT_EQ(compact.layout.buckets.size(), 1u);
  const LayoutManifest::Bucket& bucket = compact.layout.buckets[0];
  int64_t numel = 0;
  for (const LayoutManifest::Param& param : bucket.params) {
    EXPECT_EQ(param.offset, numel) << param.name;
    numel += param.numel;
  }
  EXPECT_LT(bucket.total - numel, 16 * 8);
  EXPECT_EQ(bucket.total % (16 * 8), 0);
  EXPECT_EQ(bucket.shard_size * 8, bucket.total);
  EXPECT_EQ(seed.layout.buckets[0].total, 100 * 16 * 8);
  EXPECT_EQ(compact.layout.align, LayoutManifest::Alignment::kCompact);
  // What the graph stores parses back to the same layout.
  StatusOr<LayoutManifest> stored =
      LayoutManifest::FromJson(*compact_graph->GetMetadata("zerograph.layout"));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(*stored, compact.layout);
  EXPECT_NE(compact.report.find(StrCat("padding: ", (bucket.total - numel) * 4, " bytes")),
            std::string::npos)
      << compact.report;
}

// The master copy: a bf16 bucket gets an fp32 state holding its parameters (converted exactly),
// every state of the bucket is fp32, the update reads the master shard and fp32 gradients, and
// a Cast of its result to bf16 is what the gather moves.
TEST(ShardingStage1Test, MasterWeightsKeepAnFp32CopyOfLowPrecisionShards) {
  auto graph =
      BuildToyTrainingGraph({{{"h", DataType::kBFloat16, 100}, {"f", DataType::kFloat32, 8}}});
  PassPipeline pipeline(/*verify_each=*/true);
  auto& pass = pipeline.AddPass<ShardingStage1Pass>(
      ShardingStage1Pass::Options{.nranks = 2, .master_weights = true, .master_grads = true});
  StatusOr<bool> changed = pipeline.Run(*graph);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_TRUE(CheckHazards(*graph).ok());
  const LayoutManifest& layout = pass.layout();
  ASSERT_EQ(layout.buckets.size(), 2u);
  const LayoutManifest::Bucket& fp32 =
      layout.buckets[0].dtype == DataType::kFloat32 ? layout.buckets[0] : layout.buckets[1];
  const LayoutManifest::Bucket& bf16 =
      &fp32 == &layout.buckets[0] ? layout.buckets[1] : layout.buckets[0];
  EXPECT_EQ(fp32.master_state, -1);
  ASSERT_EQ(bf16.master_state, 2);
  EXPECT_EQ(bf16.state_dtypes, std::vector<DataType>(3, DataType::kFloat32));
  EXPECT_EQ(bf16.params[0].states, (std::vector<std::string>{"h.m1", "h.m2", "h.master"}));
  StatusOr<LayoutManifest> stored =
      LayoutManifest::FromJson(*graph->GetMetadata("zerograph.layout"));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(*stored, layout);

  // The toy's parameters are zeros: the master copy of a bf16 zero is an fp32 zero.
  const Tensor* master = graph->FindValue(bf16.state_buffers[2])->initializer();
  ASSERT_NE(master, nullptr);
  EXPECT_EQ(master->dtype(), DataType::kFloat32);
  EXPECT_EQ(master->numel(), bf16.total);

  const Node* update = graph->FindValue(StrCat("shard@bucket", bf16.id, ".master.new"))->producer();
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->op_type(), "AdamW");
  EXPECT_EQ(update->input(2)->type()->dtype, DataType::kFloat32);  // the master shard
  EXPECT_EQ(update->input(3)->type()->dtype, DataType::kFloat32);  // the fp32 gradient shard
  const Node* gather = graph->FindValue(StrCat("fused@bucket", bf16.id, ".new"))->producer();
  const Node* cast = gather->input(0)->producer()->input(0)->producer();  // through the Nop
  EXPECT_EQ(cast->op_type(), "Cast");
  EXPECT_EQ(cast->input(0), update->output(0));
  EXPECT_EQ(gather->output(0)->type()->dtype, DataType::kBFloat16);
  // Master gradients: the bf16 gradient is cast to fp32 before the fp32 bucket.
  const Node* coalesce = update->input(3)->producer()->input(0)->producer();
  EXPECT_EQ(coalesce->op_type(), "CoalesceTensors");
  EXPECT_EQ(coalesce->output(0)->type()->dtype, DataType::kFloat32);
  EXPECT_EQ(coalesce->input(0)->producer()->op_type(), "Cast");
  EXPECT_NE(pipeline.Report().find("master weights: fp32 copies in 1 bucket(s), gradients reduced "
                                   "in fp32"),
            std::string::npos)
      << pipeline.Report();
}

// Without master gradients the bf16 gradient shard is reduced as is and cast after.
TEST(ShardingStage1Test, MasterWeightsWithoutMasterGradsCastTheShard) {
  auto graph = BuildToyTrainingGraph({{{"h", DataType::kBFloat16, 100}}});
  PassPipeline pipeline(/*verify_each=*/true);
  pipeline.AddPass<ShardingStage1Pass>(
      ShardingStage1Pass::Options{.nranks = 2, .master_weights = true});
  ASSERT_TRUE(pipeline.Run(*graph).ok());
  const Node* update = graph->FindValue("shard@bucket0.master.new")->producer();
  const Node* cast = update->input(3)->producer();
  EXPECT_EQ(cast->op_type(), "Cast");
  EXPECT_EQ(cast->input(0)->producer()->op_type(), "ReduceScatter");
  EXPECT_EQ(cast->input(0)->type()->dtype, DataType::kBFloat16);
}

TEST(ShardingStage1Test, MasterGradsNeedMasterWeights) {
  auto graph = BuildToyTrainingGraph({{{"h", DataType::kBFloat16, 100}}});
  PassPipeline pipeline(/*verify_each=*/true);
  pipeline.AddPass<ShardingStage1Pass>(
      ShardingStage1Pass::Options{.nranks = 2, .master_grads = true});
  StatusOr<bool> changed = pipeline.Run(*graph);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("--master-grads needs --master-weights"),
            std::string::npos)
      << changed.status().ToString();
}

}  // namespace
}  // namespace zerograph
