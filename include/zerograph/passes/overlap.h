#ifndef ZEROGRAPH_PASSES_OVERLAP_H_
#define ZEROGRAPH_PASSES_OVERLAP_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "zerograph/ir/op_role.h"  // the annotations the pass sets
#include "zerograph/passes/gradient_chain.h"
#include "zerograph/passes/pass.h"

namespace zerograph {

// Lets communication run beside backward compute. After sharding-stage1, for every
// bucket:
//
//   before:  B1 ─ ... ─ Bk ─ ... ─ D(k) ─ ... ─ [CoalesceTensors ReduceScatter] optimizer ...
//   after:   B1 ─ ... ─ Bk ─ D(k) ─ [CoalesceTensors ReduceScatter] ─ ... ─ optimizer ...
//
// each gradient's chain of single-input post-processing nodes D (casts, scales) moves right after
// its backward op B, and the bucket's fusion and reduce-scatter right after the latest chain end
// (the seed picks the first chain node instead, which is wrong for chains of two or more).
// ReduceScatter, Nop, AllGather and AllReduce run on the communication stream, in schedule order on
// every rank; only compute moves. The parameter views read at the start of the next step wait for
// the all-gather that wrote them (`__after_previous_step`), which the seed leaves unordered.
class OverlapPass : public GraphPass {
 public:
  std::string_view name() const override { return "overlap"; }
  std::string StatsString() const override { return stats_; }
  // Runs take the gradient chains the sharding pass put into `handoff`
  // (ShardingStage1Pass::HandOffChains) instead of walking them again.
  void TakeChainsFrom(GradientChainHandoff* handoff) { chain_handoff_ = handoff; }

 protected:
  StatusOr<bool> RunImpl(Graph& graph) override;

 private:
  GradientChainHandoff* chain_handoff_ = nullptr;
  std::string stats_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_OVERLAP_H_
