#ifndef ZEROGRAPH_PASSES_SHARDING_STAGE1_H_
#define ZEROGRAPH_PASSES_SHARDING_STAGE1_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "zerograph/ir/layout_manifest.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/passes/gradient_chain.h"
#include "zerograph/passes/pass.h"

namespace zerograph {

// Which order fills the buckets.
enum class BucketOrder {
  // Parameters whose gradients backward produces first go into the first bucket, so its
  // reduce-scatter can start while backward still runs.
  kGradientReady,
  // Optimizer parameter order, as the seed (Paddle) does.
  kParameter,
};

// ZeRO stage 1 with tensor fusion: every rank keeps 1/N of the optimizer state. Per bucket of
// parameters sharing dtype and optimizer:
//
//   grads ─> CoalesceTensors ─> ReduceScatter(avg) ─> shard grad ─┐
//   fused params ─> LocalShard ────────────────────> shard param ─┼─> optimizer ─> Nop ─> AllGather
//   fused states ─> LocalShard ────────────────────> shard states ┘                        │
//   fused params ─> TensorViews ─> params (forward)             new params <─ TensorViews ─┘
//
// With master weights the optimizer updates the fp32 master shard and a Cast to the parameters'
// dtype feeds the Nop.
//
// Parameters and states become fused initializers (one graph serves every rank; each rank
// materialises its shard). A parameter that cannot be sharded keeps its update, with its gradient
// all-reduced (avg), so training stays exact.
class ShardingStage1Pass : public GraphPass {
 public:
  struct Options {
    // Ranks that share the optimizer state.
    int64_t nranks = 1;
    // Bucket size limit in MiB of unpadded gradient bytes (the seed's default, 256).
    double comm_buffer_mb = 256;
    BucketOrder bucket_order = BucketOrder::kGradientReady;
    // Padding: every parameter (the seed's rule), or only each bucket's end.
    LayoutManifest::Alignment align = LayoutManifest::Alignment::kSeed;
    // Buckets of fp16/bf16 parameters keep an fp32 master copy of each shard, as one more
    // optimizer state: the update runs in fp32 on the master and casts the result to the
    // parameters' dtype, so the all-gather still moves the low-precision bytes. Their other states
    // are fp32 too.
    bool master_weights = false;
    // With master weights: gradients are cast to fp32 before the reduce-scatter, into an fp32
    // bucket with the parameter bucket's element offsets (else the low-precision shard is cast).
    bool master_grads = false;
  };

  explicit ShardingStage1Pass(Options options) : options_(options) {}

  std::string_view name() const override { return "sharding-stage1"; }
  std::string StatsString() const override { return stats_; }

  // The layout the last run produced.
  const LayoutManifest& layout() const { return layout_; }

  // The next run takes `spec` (BindingNames::kViewed) as the graph's training spec instead of
  // reading it again: the spec LoadModel resolved (LoadOptions::resolved_spec), for a graph no
  // pass has changed since it was loaded.
  void UseLoadedSpec(ResolvedTrainingSpec spec) { loaded_spec_ = std::move(spec); }
  // Runs put each bucket's gradient chains into `handoff`, in the order the bucket's
  // CoalesceTensors reads the gradients, bucket after bucket: what overlap walks again.
  void HandOffChains(GradientChainHandoff* handoff) { chain_handoff_ = handoff; }

 protected:
  StatusOr<bool> RunImpl(Graph& graph) override;

 private:
  Options options_;
  std::optional<ResolvedTrainingSpec> loaded_spec_;
  GradientChainHandoff* chain_handoff_ = nullptr;
  LayoutManifest layout_;
  std::string stats_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_SHARDING_STAGE1_H_
