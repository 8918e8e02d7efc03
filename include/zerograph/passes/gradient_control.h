#ifndef ZEROGRAPH_PASSES_GRADIENT_CONTROL_H_
#define ZEROGRAPH_PASSES_GRADIENT_CONTROL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "zerograph/passes/pass.h"

namespace zerograph {

// Gradient clipping by global norm and dynamic loss scaling, across ranks. Each rank sums the
// squares of the gradients its updates read (its shards of the buckets, the whole gradient of a
// parameter left whole), the shard sums are all-reduced (the whole gradients are the same on every
// rank, so they count once), and GradientControl turns the total into one control tensor
// [gradient multiplier, skip, norm] that every optimizer update takes as its last input:
//
//   shard grads ─> SumOfSquares ─> AllReduce(sum) ─┐
//   whole grads ─> SumOfSquares ───────────────────┴─> Add ─> GradientControl ─> control ─> updates
//                   zg.loss_scale, zg.loss_scale.good_steps ─┘         └─> their new values
//
// Every rank computes the same control, so a step whose gradients overflowed is skipped on every
// rank. Runs after sharding-stage1 and overlap (its all-reduce joins the other collectives'
// stream); the optimizers must be org.zerograph's, whose updates take the control. A graph that
// already has a control (made before it was sharded) keeps it, with its settings: the pass
// rebuilds the sums it reads for the graph's layout now.
class GradientControlPass : public GraphPass {
 public:
  struct Options {
    // Clip to this global L2 norm (PyTorch's clip_grad_norm_); 0: no clipping, or the existing
    // control's norm.
    float max_norm = 0;
    // Dynamic loss scaling, when the graph has zerograph.loss_scaling (PyTorch GradScaler's
    // defaults): the scale grows after `growth_interval` steps without overflow, and backs off
    // on an overflow, whose step is skipped.
    float growth_factor = 2.0f;
    float backoff_factor = 0.5f;
    int64_t growth_interval = 2000;
  };

  explicit GradientControlPass(Options options) : options_(options) {}

  std::string_view name() const override { return "gradient-control"; }
  std::string StatsString() const override { return stats_; }

 protected:
  StatusOr<bool> RunImpl(Graph& graph) override;

 private:
  Options options_;
  std::string stats_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_GRADIENT_CONTROL_H_
