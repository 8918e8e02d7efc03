#include "zerograph/passes/hazard_check.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "passes/collective.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node_sweep.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/optimizer_signature.h"

namespace zerograph {
namespace {

std::string Label(const Node& node) { return StrCat("'", node.name(), "' (", node.op_type(), ")"); }

// Of each kind, the last in the schedule.
struct Bucket {
  Node* param_views = nullptr;
  Node* coalesce = nullptr;
  Node* all_gather = nullptr;
  Node* last_update = nullptr;
};

void KeepLast(Node*& last, Node* node) {
  if (node != nullptr && (last == nullptr || last->IsBefore(*node))) last = node;
}

// What the checks read of the nodes (SweepStoredNodes). Order is kept where it matters, by the
// order keys: the first collective, each bucket's last update.
struct Found {
  std::map<int64_t, Bucket> buckets;
  std::vector<const Node*> collectives;

  void Add(Node* node) {
    if (IsCollective(*node)) collectives.push_back(node);
    if (node->bucket() < 0 || node->domain() != kZerographDomain) {
      if (node->bucket() >= 0 && FindOptimizerSignature(*node)) {
        KeepLast(buckets[node->bucket()].last_update, node);
      }
      return;
    }
    Bucket& bucket = buckets[node->bucket()];
    if (node->op_type() == "TensorViews" && node->role() == OpRole::kForward) {
      KeepLast(bucket.param_views, node);
    }
    if (node->op_type() == "CoalesceTensors") KeepLast(bucket.coalesce, node);
    if (node->op_type() == "AllGather") KeepLast(bucket.all_gather, node);
    if (FindOptimizerSignature(*node)) KeepLast(bucket.last_update, node);
  }

  void Merge(const Found& later) {
    collectives.insert(collectives.end(), later.collectives.begin(), later.collectives.end());
    for (const auto& [id, found] : later.buckets) {
      Bucket& bucket = buckets[id];
      KeepLast(bucket.param_views, found.param_views);
      KeepLast(bucket.coalesce, found.coalesce);
      KeepLast(bucket.all_gather, found.all_gather);
      KeepLast(bucket.last_update, found.last_update);
    }
  }
};

// The optimizer update the gather's data comes from, looking through Nop, Identity and Cast (the
// master weights' update casts its fp32 result to the parameters' dtype).
const Node* UpdateFeeding(const Node& all_gather) {
  const Value* value = all_gather.input(0);
  while (value != nullptr && value->producer() != nullptr) {
    const Node* producer = value->producer();
    if (FindOptimizerSignature(*producer)) return producer;
    if (!producer->Is(kZerographDomain, "Nop") && !producer->Is("", "Identity") &&
        !producer->Is("", "Cast")) {
      return nullptr;
    }
    value = producer->input(0);
  }
  return nullptr;
}

}  // namespace

Status CheckHazards(const Graph& graph) {
  std::optional<int64_t> nranks;
  if (std::optional<std::string_view> text = graph.GetMetadata("zerograph.nranks")) {
    int64_t parsed = 0;
    auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), parsed);
    if (error == std::errc() && end == text->data() + text->size()) nranks = parsed;
  }

  auto [buckets, collectives] = SweepStoredNodes<Found>(graph);
  std::sort(collectives.begin(), collectives.end(),
            [](const Node* a, const Node* b) { return a->IsBefore(*b); });
  for (const Node* node : collectives) {
    const Node* first = collectives.front();
    ZG_RETURN_IF_NOT(node->stream() == first->stream(), "hazard: collectives ", Label(*first),
                     " on stream '", first->stream(), "' and ", Label(*node), " on stream '",
                     node->stream(), "' may run in different orders on different ranks (deadlock)");
    std::optional<int64_t> node_ranks = node->GetInt("nranks");
    ZG_RETURN_IF_NOT(!nranks || (node_ranks && *node_ranks == *nranks), "hazard: collective ",
                     Label(*node), " is for ", node_ranks.value_or(0),
                     " ranks, but the graph is rewritten for ", nranks.value_or(0));
  }

  for (const auto& [id, bucket] : buckets) {
    if (bucket.all_gather == nullptr) continue;
    const Node& gather = *bucket.all_gather;
    ZG_RETURN_IF_NOT(bucket.last_update != nullptr, "hazard: bucket ", id, " has ", Label(gather),
                     " but no optimizer update");
    const Node* feeding = UpdateFeeding(gather);
    ZG_RETURN_IF_NOT(feeding == bucket.last_update, "hazard: ", Label(gather),
                     " does not wait for bucket ", id, "'s last update ",
                     Label(*bucket.last_update), "; it could gather parameters not yet updated");

    // The gather overwrites the fused parameters in place: every reader must be done by then. A
    // reader on the compute stream before the update is, since the gather waits for the update.
    if (bucket.param_views != nullptr) {
      std::vector<const Value*> params(bucket.param_views->outputs().begin(),
                                       bucket.param_views->outputs().end());
      params.push_back(bucket.param_views->input(0));
      for (const Value* param : params) {
        for (const Use& use : param->users()) {
          const Node& reader = *use.node;
          if (&reader == bucket.param_views) continue;
          const bool done_before_gather =
              reader.stream() == bucket.last_update->stream() &&
              (reader.IsBefore(*bucket.last_update) || &reader == bucket.last_update);
          ZG_RETURN_IF_NOT(done_before_gather, "hazard: ", Label(reader), " reads parameter '",
                           param->name(), "' of bucket ", id, " after its last update ",
                           Label(*bucket.last_update), ", while ", Label(gather),
                           " may already overwrite it");
        }
      }
      if (gather.stream() != bucket.param_views->stream()) {
        std::optional<std::vector<std::string_view>> waits =
            bucket.param_views->GetStrings(kAfterPreviousStepAttr);
        ZG_RETURN_IF_NOT(
            waits && std::find(waits->begin(), waits->end(), gather.name()) != waits->end(),
            "hazard: ", Label(*bucket.param_views), " reads bucket ", id,
            "'s parameters at the start of a step without waiting for ", Label(gather),
            " of the previous step (add it to ", kAfterPreviousStepAttr, ")");
      }
    }
    if (bucket.coalesce != nullptr) {
      for (const Value* gradient : bucket.coalesce->inputs()) {
        for (const Use& use : gradient->users()) {
          ZG_RETURN_IF_NOT(use.node == bucket.coalesce || use.node->stream() == kComputeStream,
                           "hazard: ", Label(*use.node), " reads gradient '", gradient->name(),
                           "' on stream '", use.node->stream(),
                           "', racing the compute stream that writes it");
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace zerograph
