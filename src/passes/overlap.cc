#include "zerograph/passes/overlap.h"

#include <algorithm>
#include <map>
#include <vector>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/node_sweep.h"
#include "zerograph/passes/gradient_chain.h"

namespace zerograph {
namespace {

// The nodes sharding-stage1 made for one bucket.
struct BucketNodes {
  Node* param_views = nullptr;
  Node* coalesce = nullptr;
  Node* reduce_scatter = nullptr;
  std::vector<Node*> comm;  // Nop and AllGather
  Node* all_gather = nullptr;
};

bool IsZerographOp(const Node& node, std::string_view op) { return node.Is(kZerographDomain, op); }

// The buckets' nodes and the all-reduces (SweepStoredNodes; only the all-reduces' order matters).
struct CommNodes {
  std::map<int64_t, BucketNodes> buckets;
  std::vector<Node*> all_reduces;

  void Add(Node* node) {
    if (node->domain() != kZerographDomain) return;
    if (node->op_type() == "AllReduce") {
      all_reduces.push_back(node);
      return;
    }
    if (node->bucket() < 0) return;
    BucketNodes& bucket = buckets[node->bucket()];
    if (IsZerographOp(*node, "TensorViews") && node->role() == OpRole::kForward) {
      bucket.param_views = node;
    } else if (IsZerographOp(*node, "CoalesceTensors")) {
      bucket.coalesce = node;
    } else if (IsZerographOp(*node, "ReduceScatter")) {
      bucket.reduce_scatter = node;
    } else if (IsZerographOp(*node, "Nop")) {
      bucket.comm.push_back(node);
    } else if (IsZerographOp(*node, "AllGather")) {
      bucket.comm.push_back(node);
      bucket.all_gather = node;
    }
  }

  // Takes in a later slice's nodes, as Add would have met them.
  void Merge(const CommNodes& later) {
    all_reduces.insert(all_reduces.end(), later.all_reduces.begin(), later.all_reduces.end());
    for (auto& [id, found] : later.buckets) {
      BucketNodes& bucket = buckets[id];
      for (Node* BucketNodes::*member : {&BucketNodes::param_views, &BucketNodes::coalesce,
                                         &BucketNodes::reduce_scatter, &BucketNodes::all_gather}) {
        if (found.*member != nullptr) bucket.*member = found.*member;
      }
      bucket.comm.insert(bucket.comm.end(), found.comm.begin(), found.comm.end());
    }
  }
};

// Moves a `Constant` that `node` reads to just before it, when it is not earlier already.
void HoistConstants(Graph& graph, Node* node) {
  for (Value* input : node->inputs()) {
    if (input == nullptr || input->producer() == nullptr) continue;
    Node* producer = input->producer();
    if (producer->Is("", "Constant") && node->IsBefore(*producer)) graph.MoveBefore(producer, node);
  }
}

}  // namespace

StatusOr<bool> OverlapPass::RunImpl(Graph& graph) {
  auto [buckets, all_reduces] = SweepStoredNodes<CommNodes>(graph);
  std::sort(all_reduces.begin(), all_reduces.end(),
            [](const Node* a, const Node* b) { return a->IsBefore(*b); });
  ZG_RETURN_IF_NOT(!buckets.empty() || !all_reduces.empty(),
                   "the graph has no buckets: run sharding-stage1 (--nranks) before overlap");

  for (const auto& [id, bucket] : buckets) {
    ZG_RETURN_IF_NOT(bucket.coalesce != nullptr && bucket.reduce_scatter != nullptr &&
                         bucket.all_gather != nullptr && bucket.param_views != nullptr,
                     "bucket ", id,
                     " lacks its CoalesceTensors, ReduceScatter, AllGather or "
                     "parameter views: the graph was not made by sharding-stage1");
  }

  // Every chain is found first: moving nodes changes no producer, so the chains stay what they
  // were. Those the sharding pass handed off are read where the handoff keeps them (cleared once
  // the chains are moved), the others walked on several threads.
  std::vector<const Value*> gradients;
  for (const auto& [id, bucket] : buckets) {
    gradients.insert(gradients.end(), bucket.coalesce->inputs().begin(),
                     bucket.coalesce->inputs().end());
  }
  for (const Node* node : all_reduces) gradients.push_back(node->input(0));
  std::vector<GradientChainView> chains(gradients.size());
  std::vector<size_t> to_walk;
  for (size_t g = 0; g < gradients.size(); ++g) {
    std::optional<GradientChainView> taken;
    if (chain_handoff_ != nullptr) taken = chain_handoff_->Take(g, gradients[g]);
    if (taken) {
      chains[g] = *taken;
    } else {
      to_walk.push_back(g);
    }
  }
  std::vector<const Value*> walked_gradients;
  walked_gradients.reserve(to_walk.size());
  for (size_t g : to_walk) walked_gradients.push_back(gradients[g]);
  const std::vector<GradientChain> walked = FindGradientChains(walked_gradients);
  for (size_t i = 0; i < to_walk.size(); ++i) chains[to_walk[i]] = GradientChainView(walked[i]);

  int64_t moved = 0;
  int64_t declined = 0;
  std::string declines;
  // Moves gradient g's chain right after its backward op; returns where the gradient is ready.
  auto make_ready_early = [&](size_t g) -> Node* {
    const Value* gradient = gradients[g];
    const GradientChainView& found = chains[g];
    if (found.backward_op == nullptr) {
      ++declined;
      declines += StrCat("    gradient '", gradient->name(), "' stays: ", found.stop_reason, "\n");
      return gradient->producer();
    }
    Node* anchor = found.backward_op;
    for (auto it = found.chain.rbegin(); it != found.chain.rend(); ++it) {
      if (anchor->next() != *it) {
        graph.MoveAfter(*it, anchor);
        HoistConstants(graph, *it);
        ++moved;
      }
      anchor = *it;
    }
    return anchor;
  };

  size_t g = 0;  // gradients[] and chains[] are in the order of the loops below
  for (auto& [id, bucket] : buckets) {
    Node* latest = nullptr;
    for (size_t i = 0; i < bucket.coalesce->num_inputs(); ++i) {
      Node* ready = make_ready_early(g++);
      if (ready != nullptr && (latest == nullptr || latest->IsBefore(*ready))) latest = ready;
    }
    if (latest != nullptr) {
      graph.MoveAfter(bucket.coalesce, latest);
    } else {
      graph.MoveBefore(bucket.coalesce, graph.first_node());
    }
    graph.MoveAfter(bucket.reduce_scatter, bucket.coalesce);
    bucket.reduce_scatter->SetStream(kCommStream);
    for (Node* node : bucket.comm) node->SetStream(kCommStream);
    bucket.param_views->SetStrings(
        kAfterPreviousStepAttr, std::vector<std::string>{std::string(bucket.all_gather->name())});
  }
  for (Node* node : all_reduces) {
    Node* ready = make_ready_early(g++);
    if (ready != nullptr) graph.MoveAfter(node, ready);
    node->SetStream(kCommStream);
  }
  if (chain_handoff_ != nullptr) chain_handoff_->Clear();
  stats_ = StrCat("  buckets overlapped: ", buckets.size(), ", all-reduces: ", all_reduces.size(),
                  "\n  nodes moved after their backward op: ", moved,
                  "\n  gradients whose chain stays: ", declined, "\n", declines);
  return true;
}

}  // namespace zerograph
