#include "zerograph/passes/sharding_stage1.h"

#include <algorithm>
#include <cstdint>
#include <future>
#include <limits>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/parallelism.h"
#include "passes/sharding_candidates.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/passes/bucket_assignment.h"
#include "zerograph/passes/gradient_chain.h"

namespace zerograph {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TensorType Flat(DataType dtype, int64_t numel) {
  return TensorType{dtype, std::vector<int64_t>{numel}};
}

bool IsLowPrecision(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

class ShardingRewriter {
 public:
  ShardingRewriter(Graph& graph, const ShardingStage1Pass::Options& options, LayoutManifest& layout,
                   GradientChainHandoff* chain_handoff)
      : graph_(graph), options_(options), layout_(layout), chain_handoff_(chain_handoff) {}

  // `loaded_spec`, when given, is the graph's spec as read when it was loaded.
  StatusOr<bool> Run(std::optional<ResolvedTrainingSpec> loaded_spec, std::string& stats) {
    ZG_RETURN_IF_NOT(options_.nranks >= 1 && options_.nranks <= kMaxRanks,
                     "--nranks must be from 1 to ", kMaxRanks, ", got ", options_.nranks);
    ZG_RETURN_IF_NOT(options_.comm_buffer_mb * kMiB >= 1, "--comm-buffer-mb must be positive, got ",
                     options_.comm_buffer_mb);
    ZG_RETURN_IF_NOT(options_.master_weights || !options_.master_grads,
                     "--master-grads needs --master-weights: the fp32 gradients feed the fp32 "
                     "update of the master copy");
    // The candidates are swept on other threads while this one reads the spec.
    sweep_.emplace(graph_);
    // The binding's names as views into its text, which stays as it is until UpdateMetadata.
    std::optional<ResolvedTrainingSpec> spec = std::move(loaded_spec);
    if (!spec) {
      ZG_ASSIGN_OR_RETURN(spec, ReadResolvedTrainingSpec(graph_, BindingNames::kViewed));
    }
    ZG_RETURN_IF_NOT(spec.has_value(),
                     "the graph has no zerograph.loss metadata, so it is not a training graph "
                     "(see docs/formats.md)");
    spec_ = std::move(spec->spec);
    binding_new_values_ = std::move(spec->binding_new_values);
    binding_old_values_ = std::move(spec->binding_old_values);
    binding_names_ = std::move(spec->binding_names);
    ZG_RETURN_IF_NOT(!spec_.nranks.has_value() && !spec_.layout.has_value(),
                     "the graph is already rewritten (zerograph.nranks = ",
                     spec_.nranks.value_or(0), "); rewrite the original training graph instead");
    ZG_RETURN_IF_ERROR(CollectCandidates());
    ZG_RETURN_IF_NOT(!candidates_.empty(),
                     "the graph has no optimizer node updating a parameter (AdamW, SGD, Adam, "
                     "Momentum or Adagrad; docs/formats.md), so there is nothing to shard");
    is_sharded_.assign(candidates_.size(), 0);
    layout_ = LayoutManifest();
    layout_.nranks = options_.nranks;
    layout_.align = options_.align;
    std::vector<std::vector<size_t>> buckets = FormBuckets();
    // Every parameter that is sharded, and its update, becomes a view, and a view's value_info
    // message (an arena allocation per field) is most of what adopting one costs: the messages
    // are made on another thread while the buckets' buffers and nodes are made.
    view_records_ = RunOnTheSide([this] { return MakeViewRecords(); }).share();
    // Candidates are in their optimizers' schedule order, and members in candidate order.
    for (const std::vector<size_t>& bucket : buckets) {
      Node* optimizer = candidates_[bucket.front()]->optimizer;
      if (first_sharded_update_ == nullptr || optimizer->IsBefore(*first_sharded_update_)) {
        first_sharded_update_ = optimizer;
      }
    }
    for (size_t k = 0; k < buckets.size(); ++k) {
      ZG_RETURN_IF_ERROR(RewriteBucket(static_cast<int64_t>(k), buckets[k]));
    }
    AllReduceWholeGradients();
    // The manifest is complete: its JSON (tens of MB on a large model) is written on the side
    // while the per-parameter updates are erased.
    std::future<std::string> layout_json = RunOnTheSide([this] { return layout_.ToJson(); });
    ZG_RETURN_IF_ERROR(RetireOptimizers());
    UpdateMetadata(layout_json.get());
    stats = Stats();
    return true;
  }

 private:
  // Takes the sweep's candidates, and the nodes of other optimizers that update state.
  Status CollectCandidates() {
    ZG_ASSIGN_OR_RETURN(CandidateSweep::Found found, sweep_->Finish());
    candidates_ = std::move(found.candidates);
    // Most graphs have none: the binding's values (several per parameter) are not marked then.
    if (found.other_optimize_nodes.empty()) return Status::Ok();
    is_bound_new_value_.assign(static_cast<size_t>(graph_.value_id_bound()), 0);
    for (const Value* value : binding_new_values_) {
      if (value != nullptr) is_bound_new_value_[static_cast<size_t>(value->id())] = 1;
    }
    for (Node* node : found.other_optimize_nodes) {
      if (UpdatesState(*node)) unknown_updates_.push_back(node);
    }
    return Status::Ok();
  }

  // True when one of the node's outputs replaces state after the step.
  bool UpdatesState(const Node& node) const {
    for (const Value* output : node.outputs()) {
      if (output != nullptr && is_bound_new_value_[static_cast<size_t>(output->id())]) return true;
    }
    return false;
  }

  // Bucket membership in the chosen order; each bucket's members in parameter order.
  std::vector<std::vector<size_t>> FormBuckets() {
    // (Where the gradient is ready, candidate); one ready before the step starts comes first.
    std::vector<std::pair<int64_t, size_t>> ready_order;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      const Candidate& c = *candidates_[i];
      if (!c.whole_reason.empty()) continue;
      ready_order.emplace_back(
          c.ready != nullptr ? c.ready->schedule_key() : std::numeric_limits<int64_t>::min(), i);
    }
    if (options_.bucket_order == BucketOrder::kGradientReady) {
      std::stable_sort(ready_order.begin(), ready_order.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    std::vector<size_t> order;
    order.reserve(ready_order.size());
    for (const auto& [key, index] : ready_order) order.push_back(index);
    std::vector<BucketItem> items;
    items.reserve(order.size());
    for (size_t index : order) {
      const Candidate& c = *candidates_[index];
      items.push_back(
          {c.key, c.layout.numel * static_cast<int64_t>(ElementSize(c.param_type.dtype))});
    }
    std::vector<std::vector<size_t>> buckets =
        AssignBuckets(items, static_cast<int64_t>(options_.comm_buffer_mb * kMiB));
    for (std::vector<size_t>& bucket : buckets) {
      for (size_t& member : bucket) member = order[member];
      std::sort(bucket.begin(), bucket.end());
    }
    return buckets;
  }

  Status RewriteBucket(int64_t k, const std::vector<size_t>& members) {
    const Candidate& lead = *candidates_[members.front()];
    const DataType dtype = lead.param_type.dtype;
    // The update's dtype: fp32 on the master copy, else the parameters' own.
    const bool master = options_.master_weights && IsLowPrecision(dtype);
    const DataType update_dtype = master ? DataType::kFloat32 : dtype;
    const int64_t n = options_.nranks;
    const std::string prefix = StrCat("fused@bucket", k);
    const std::string shard_prefix = StrCat("shard@bucket", k);

    LayoutManifest::Bucket bucket;
    bucket.id = k;
    bucket.dtype = dtype;
    bucket.optimizer = StrCat(lead.signature.domain, ".", lead.signature.op_type);
    // Sized once: a bucket may hold every parameter of the model.
    std::vector<int64_t> offsets, numels, shapes, ranks;
    std::vector<const Tensor*> params;
    std::vector<Value*> grads;
    for (auto* list : {&offsets, &numels, &ranks}) list->reserve(members.size());
    shapes.reserve(2 * members.size());
    params.reserve(members.size());
    grads.reserve(members.size());
    bucket.params.reserve(members.size());
    if (chain_handoff_ != nullptr) {
      size_t chain_nodes = 0;
      for (size_t member : members) chain_nodes += candidates_[member]->chain.size();
      chain_handoff_->Reserve(members.size(), chain_nodes);
    }
    for (size_t member : members) {
      Candidate& c = *candidates_[member];
      LayoutManifest::Param& param = c.layout;
      param.offset = bucket.total;
      param.padded = options_.align == LayoutManifest::Alignment::kSeed
                         ? PaddedNumel(param.numel, dtype, n)
                         : param.numel;
      offsets.push_back(param.offset);
      numels.push_back(param.numel);
      shapes.insert(shapes.end(), param.shape.begin(), param.shape.end());
      ranks.push_back(static_cast<int64_t>(param.shape.size()));
      bucket.total += param.padded;
      padding_bytes_ += (param.padded - param.numel) * static_cast<int64_t>(ElementSize(dtype));
      if (master) param.states.push_back(StrCat(param.name, ".master"));
      params.push_back(c.tensor);
      grads.push_back(c.slot.grad);
      if (chain_handoff_ != nullptr) {
        chain_handoff_->Put(c.slot.grad, c.chain_reaches_ready ? c.ready : nullptr, c.chain);
      }
      bucket.params.push_back(std::move(param));
    }
    if (options_.align == LayoutManifest::Alignment::kCompact) {
      // The bucket's end only, so that it splits into N aligned shards.
      const int64_t tail = PaddedNumel(bucket.total, dtype, n) - bucket.total;
      bucket.params.back().padded += tail;
      bucket.total += tail;
      padding_bytes_ += tail * static_cast<int64_t>(ElementSize(dtype));
    }
    bucket.shard_size = bucket.total / n;

    // Fused parameter and state buffers replace the per-parameter initializers. Their bytes are
    // made from the parameters' and states' tensors when the graph is written (FusedBytes).
    Value* fused =
        graph_.AddInitializer(prefix, dtype, std::vector<int64_t>{bucket.total}, std::string());
    Value* master_buffer = nullptr;
    if (master) {
      master_buffer = graph_.AddInitializer(StrCat(prefix, ".master"), DataType::kFloat32,
                                            std::vector<int64_t>{bucket.total}, std::string());
      ZG_RETURN_IF_ERROR(Fuse(master_buffer, params, offsets, bucket.total, DataType::kFloat32));
      ++master_buckets_;
    }
    ZG_RETURN_IF_ERROR(Fuse(fused, std::move(params), offsets, bucket.total, dtype));
    bucket.param_buffer = std::string(fused->name());
    std::vector<Value*> fused_states;
    for (int s = 0; s < lead.signature.num_states; ++s) {
      std::vector<const Tensor*> states;
      states.reserve(members.size());
      for (size_t member : members) {
        states.push_back(candidates_[member]->state_tensors[static_cast<size_t>(s)]);
      }
      const DataType state_dtype = master ? DataType::kFloat32 : states.front()->dtype();
      Value* state = graph_.AddInitializer(StrCat(prefix, ".state", s), state_dtype,
                                           std::vector<int64_t>{bucket.total}, std::string());
      ZG_RETURN_IF_ERROR(Fuse(state, std::move(states), offsets, bucket.total, state_dtype));
      fused_states.push_back(state);
      bucket.state_buffers.emplace_back(state->name());
      bucket.state_dtypes.push_back(state_dtype);
    }
    if (master) {
      bucket.master_state = static_cast<int64_t>(bucket.state_buffers.size());
      bucket.state_buffers.emplace_back(master_buffer->name());
      bucket.state_dtypes.push_back(DataType::kFloat32);
    }

    // Forward reads the parameters as views of the fused buffer: each parameter becomes a view,
    // so its readers need no edit.
    Node* param_views =
        graph_.AddNode("TensorViews", kZerographDomain, std::vector<Value*>{fused}, {},
                       StrCat("zg.bucket", k, ".param_views"), graph_.first_node());
    SetViewAttributes(*param_views, offsets, shapes, ranks);
    Annotate(*param_views, OpRole::kForward, k);
    const ViewRecords& records = view_records_.get();
    for (size_t member : members) {
      const Candidate& c = *candidates_[member];
      graph_.AdoptAsOutput(param_views, c.slot.param, c.param_type, records.params[member]);
    }

    // Gradients are fused and reduce-scattered once backward has produced them all.
    Node* latest_grad = nullptr;
    int64_t latest_grad_key = std::numeric_limits<int64_t>::min();
    for (size_t member : members) {
      const Candidate& c = *candidates_[member];
      if (c.grad_producer_key > latest_grad_key) {
        latest_grad_key = c.grad_producer_key;
        latest_grad = c.slot.grad->producer();
      }
    }
    Node* first_update = lead.optimizer;
    Node* comm_before = first_sharded_update_;
    if (latest_grad != nullptr && !latest_grad->IsBefore(*comm_before))
      comm_before = latest_grad->next();
    // Master gradients: each is cast to fp32 on its way into the bucket (gradient
    // post-processing, which the overlap pass moves up to its backward op).
    if (master && options_.master_grads) {
      for (size_t i = 0; i < grads.size(); ++i) {
        grads[i] = AddCast(grads[i], DataType::kFloat32, StrCat(grads[i]->name(), "@fp32"), k,
                           comm_before);
      }
    }
    Node* coalesce = graph_.AddNode("CoalesceTensors", kZerographDomain, grads,
                                    std::vector<std::string>{StrCat(prefix, ".grad")},
                                    StrCat("zg.bucket", k, ".coalesce"), comm_before);
    coalesce->SetInts("offsets", offsets);
    coalesce->SetInts("numels", numels);
    coalesce->SetInt("total", bucket.total);
    Annotate(*coalesce, OpRole::kOptimize, k);
    const DataType grad_dtype = grads.front()->type() ? grads.front()->type()->dtype : dtype;
    graph_.SetValueType(coalesce->output(0), Flat(grad_dtype, bucket.total));
    Node* reduce_scatter =
        graph_.AddNode("ReduceScatter", kZerographDomain, std::vector<Value*>{coalesce->output(0)},
                       std::vector<std::string>{StrCat(shard_prefix, ".grad")},
                       StrCat("zg.bucket", k, ".reduce_scatter"), coalesce->next());
    SetCollectiveAttributes(*reduce_scatter);
    reduce_scatter->SetString("reduce_op", "avg");
    Annotate(*reduce_scatter, OpRole::kOptimize, k);
    graph_.SetValueType(reduce_scatter->output(0), Flat(grad_dtype, bucket.shard_size));

    // This rank's shards feed one fused update in place of the parameters' updates.
    Node* param_shard =
        master ? AddLocalShard(master_buffer, StrCat(shard_prefix, ".master"), k, first_update,
                               bucket.shard_size)
               : AddLocalShard(fused, shard_prefix, k, first_update, bucket.shard_size);
    Value* grad_shard = reduce_scatter->output(0);
    if (master && grad_dtype != DataType::kFloat32) {
      grad_shard = AddCast(grad_shard, DataType::kFloat32, StrCat(shard_prefix, ".grad@fp32"), k,
                           first_update);
    }
    std::vector<Value*> update_inputs;
    for (int i = 0; i < lead.signature.num_scalars; ++i)
      update_inputs.push_back(lead.optimizer->input(static_cast<size_t>(i)));
    update_inputs.push_back(param_shard->output(0));
    update_inputs.push_back(grad_shard);
    std::vector<std::string> update_outputs = {
        StrCat(shard_prefix, master ? ".master.new" : ".new")};
    for (int s = 0; s < lead.signature.num_states; ++s) {
      Node* state_shard =
          AddLocalShard(fused_states[static_cast<size_t>(s)], StrCat(shard_prefix, ".state", s), k,
                        first_update, bucket.shard_size);
      update_inputs.push_back(state_shard->output(0));
      update_outputs.push_back(StrCat(shard_prefix, ".state", s, ".new"));
    }
    // The bucket's members share one control (it is part of their key).
    if (Value* control = OptimizerControl(*lead.optimizer, lead.signature)) {
      update_inputs.push_back(control);
    }
    Node* update = graph_.AddNode(lead.signature.op_type, lead.signature.domain, update_inputs,
                                  update_outputs, StrCat("zg.bucket", k, ".update"), first_update);
    update->CopyAttributesFrom(*lead.optimizer);
    Annotate(*update, OpRole::kOptimize, k);
    graph_.SetValueType(update->output(0), Flat(update_dtype, bucket.shard_size));
    Value* new_shard = update->output(0);
    if (master) {
      graph_.AddOutput(new_shard);
      binding_.emplace_back(new_shard->name(), master_buffer->name());
      new_shard = AddCast(new_shard, dtype, StrCat(shard_prefix, ".new"), k, first_update);
    }
    for (int s = 0; s < lead.signature.num_states; ++s) {
      Value* new_state = update->output(1 + static_cast<size_t>(s));
      graph_.SetValueType(new_state,
                          Flat(bucket.state_dtypes[static_cast<size_t>(s)], bucket.shard_size));
      graph_.AddOutput(new_state);
      binding_.emplace_back(new_state->name(), fused_states[static_cast<size_t>(s)]->name());
    }

    // The gather waits for the update (Nop), then refreshes every parameter of the bucket.
    Node* nop = graph_.AddNode("Nop", kZerographDomain, std::vector<Value*>{new_shard},
                               std::vector<std::string>{StrCat(shard_prefix, ".ready")},
                               StrCat("zg.bucket", k, ".nop"), first_update);
    Annotate(*nop, OpRole::kOptimize, k);
    graph_.SetValueType(nop->output(0), Flat(dtype, bucket.shard_size));
    Node* all_gather =
        graph_.AddNode("AllGather", kZerographDomain, std::vector<Value*>{nop->output(0)},
                       std::vector<std::string>{StrCat(prefix, ".new")},
                       StrCat("zg.bucket", k, ".all_gather"), first_update);
    SetCollectiveAttributes(*all_gather);
    Annotate(*all_gather, OpRole::kOptimize, k);
    graph_.SetValueType(all_gather->output(0), Flat(dtype, bucket.total));
    graph_.AddOutput(all_gather->output(0));
    binding_.emplace_back(all_gather->output(0)->name(), fused->name());

    // The updated parameters become views of the gathered buffer, taken from the update nodes
    // that RetireOptimizers erases.
    Node* new_views =
        graph_.AddNode("TensorViews", kZerographDomain, std::vector<Value*>{all_gather->output(0)},
                       {}, StrCat("zg.bucket", k, ".new_params"), first_update);
    SetViewAttributes(*new_views, offsets, shapes, ranks);
    Annotate(*new_views, OpRole::kOptimize, k);
    for (size_t i = 0; i < members.size(); ++i) {
      Candidate& c = *candidates_[members[i]];
      if (c.new_param_typed) {
        graph_.AdoptAsOutput(new_views, c.slot.new_param);
      } else {
        graph_.AdoptAsOutput(new_views, c.slot.new_param, c.param_type,
                             records.new_params[members[i]]);
      }
      is_sharded_[members[i]] = 1;
    }
    layout_.buckets.push_back(std::move(bucket));
    return Status::Ok();
  }

  // By candidate: the value_info messages of its parameter and of its updated parameter as views
  // (Graph::MakeTypeRecord); null where the candidate is not sharded or its update keeps a type.
  struct ViewRecords {
    std::vector<onnx::ValueInfoProto*> params, new_params;
  };

  // Reads only what no rewrite changes: the candidates, and the names of their values.
  ViewRecords MakeViewRecords() {
    ViewRecords records{.params = std::vector<onnx::ValueInfoProto*>(candidates_.size()),
                        .new_params = std::vector<onnx::ValueInfoProto*>(candidates_.size())};
    for (size_t i = 0; i < candidates_.size(); ++i) {
      const Candidate& c = *candidates_[i];
      if (!c.whole_reason.empty()) continue;
      records.params[i] = graph_.MakeTypeRecord(c.slot.param->name(), c.param_type);
      if (!c.new_param_typed) {
        records.new_params[i] = graph_.MakeTypeRecord(c.slot.new_param->name(), c.param_type);
      }
    }
    return records;
  }

  Node* AddLocalShard(Value* fused, const std::string& name, int64_t k, Node* before,
                      int64_t shard_size) {
    Node* node = graph_.AddNode("LocalShard", kZerographDomain, std::vector<Value*>{fused},
                                std::vector<std::string>{name},
                                StrCat("zg.", name.substr(name.find('@') + 1), ".local"), before);
    node->SetInt("nranks", options_.nranks);
    Annotate(*node, OpRole::kOptimize, k);
    graph_.SetValueType(node->output(0), Flat(fused->type()->dtype, shard_size));
    return node;
  }

  // Cast(value) to `dtype` as `name`, an optimizer node of bucket k placed before `before`.
  Value* AddCast(Value* value, DataType dtype, const std::string& name, int64_t k, Node* before) {
    Node* cast = graph_.AddNode("Cast", "", std::vector<Value*>{value},
                                std::vector<std::string>{name}, StrCat("zg.cast.", name), before);
    cast->SetInt("to", static_cast<int64_t>(dtype));
    Annotate(*cast, OpRole::kOptimize, k);
    if (std::optional<TensorType> type = value->type()) {
      graph_.SetValueType(cast->output(0), TensorType{dtype, type->dims});
    }
    return cast->output(0);
  }

  void SetCollectiveAttributes(Node& node) {
    node.SetInt("nranks", options_.nranks);
    node.SetString("group", "dp");
  }

  static void SetViewAttributes(Node& node, const std::vector<int64_t>& offsets,
                                const std::vector<int64_t>& shapes,
                                const std::vector<int64_t>& ranks) {
    node.SetInts("offsets", offsets);
    node.SetInts("shapes", shapes);
    node.SetInts("ranks", ranks);
  }

  static void Annotate(Node& node, OpRole role, int64_t bucket) {
    node.SetRole(role);
    node.SetBucket(bucket);
  }

  // Removes sharded parameters from their original optimizer nodes: a node left with no parameter
  // is erased, one with some left is rebuilt over those.
  Status RetireOptimizers() {
    std::vector<char> retired_state(static_cast<size_t>(graph_.value_id_bound()), 0);
    for (size_t i = 0; i < candidates_.size(); ++i) {
      if (!is_sharded_[i]) continue;
      for (const Value* state : candidates_[i]->slot.new_states) {
        retired_state[static_cast<size_t>(state->id())] = 1;
      }
    }
    graph_.EraseOutputsIf([&](const Value* v) {
      const auto id = static_cast<size_t>(v->id());
      return id < retired_state.size() && retired_state[id];
    });
    // Candidates were collected node by node: each optimizer's slots are one run of them.
    // Per-node lists reuse their storage: there is a node per parameter.
    //
    // Last node first: the learning rate and step have a use per optimizer node, and erasing a
    // use moves the list's last one into its place. Erased from the back, that is each time the
    // fused update's use, whose node stays cached; from the front, it was the use of another
    // node each time, a cache miss or two per node and value on a large graph.
    std::vector<size_t> kept;
    std::vector<Value*> states;
    for (size_t end = candidates_.size(), begin = end; end > 0; end = begin) {
      Node* node = candidates_[end - 1]->optimizer;
      begin = end - 1;
      while (begin > 0 && candidates_[begin - 1]->optimizer == node) --begin;
      kept.clear();
      for (size_t i = begin; i < end; ++i) {
        if (!is_sharded_[i]) kept.push_back(i);
      }
      if (kept.size() == end - begin) continue;
      std::vector<std::pair<Value*, std::string>> kept_outputs;
      if (!kept.empty()) ZG_RETURN_IF_ERROR(RebuildOptimizer(*node, kept, kept_outputs));
      states.clear();
      for (size_t i = begin; i < end; ++i) {
        if (!is_sharded_[i]) continue;
        for (Value* state : candidates_[i]->slot.states) states.push_back(state);
      }
      ZG_RETURN_IF_ERROR(graph_.EraseNode(node));
      ZG_RETURN_IF_ERROR(graph_.EraseInitializers(states));
      for (auto& [value, name] : kept_outputs) ZG_RET_CHECK(graph_.RenameValue(value, name));
    }
    return Status::Ok();
  }

  Status RebuildOptimizer(Node& node, const std::vector<size_t>& kept,
                          std::vector<std::pair<Value*, std::string>>& kept_outputs) {
    const OptimizerSignature& signature = candidates_[kept.front()]->signature;
    std::vector<Value*> inputs;
    for (int i = 0; i < signature.num_scalars; ++i) {
      inputs.push_back(node.input(static_cast<size_t>(i)));
    }
    for (size_t i : kept) inputs.push_back(candidates_[i]->slot.param);
    for (size_t i : kept) inputs.push_back(candidates_[i]->slot.grad);
    for (int s = 0; s < signature.num_states; ++s) {
      for (size_t i : kept) inputs.push_back(candidates_[i]->slot.states[static_cast<size_t>(s)]);
    }
    if (Value* control = OptimizerControl(node, signature)) inputs.push_back(control);
    std::vector<Value*> old_outputs;
    for (size_t i : kept) old_outputs.push_back(candidates_[i]->slot.new_param);
    for (int s = 0; s < signature.num_states; ++s) {
      for (size_t i : kept) {
        old_outputs.push_back(candidates_[i]->slot.new_states[static_cast<size_t>(s)]);
      }
    }
    std::vector<std::string> names;
    for (const Value* output : old_outputs) names.push_back(StrCat(output->name(), ".kept"));
    Node* rebuilt = graph_.AddNode(node.op_type(), node.domain(), inputs, names,
                                   StrCat(node.name(), ".whole"), &node);
    rebuilt->CopyAttributesFrom(node);
    rebuilt->SetRole(OpRole::kOptimize);
    for (size_t o = 0; o < old_outputs.size(); ++o) {
      if (std::optional<TensorType> type = old_outputs[o]->type()) {
        graph_.SetValueType(rebuilt->output(o), *type);
      }
      graph_.ReplaceAllUsesWith(old_outputs[o], rebuilt->output(o));
      kept_outputs.emplace_back(rebuilt->output(o), std::string(old_outputs[o]->name()));
    }
    return Status::Ok();
  }

  // Makes initializer `target`'s bytes from `sources`, each at its element offset.
  Status Fuse(Value* target, std::vector<const Tensor*> sources,
              const std::vector<int64_t>& offsets, int64_t total, DataType dtype) {
    ZG_ASSIGN_OR_RETURN(std::shared_ptr<const FusedBytes> bytes,
                        FusedBytes::Make(std::move(sources), offsets, total, dtype));
    return graph_.SetInitializerBytes(target, std::move(bytes));
  }

  // Inserts AllReduce(avg) after `gradient` and makes `reader` input `index` read the result.
  Value* AllReduce(Value* gradient, Node& reader, size_t index) {
    Node* producer = gradient->producer();
    Node* before = producer != nullptr ? producer->next() : graph_.first_node();
    Node* node = graph_.AddNode("AllReduce", kZerographDomain, std::vector<Value*>{gradient},
                                std::vector<std::string>{StrCat(gradient->name(), "@avg")},
                                StrCat("zg.all_reduce.", gradient->name()), before);
    SetCollectiveAttributes(*node);
    node->SetString("reduce_op", "avg");
    node->SetRole(OpRole::kOptimize);
    if (std::optional<TensorType> type = gradient->type()) {
      graph_.SetValueType(node->output(0), *type);
    }
    graph_.SetInput(&reader, index, node->output(0));
    return node->output(0);
  }

  // Parameters left whole keep their update; averaging their gradients keeps training exact.
  void AllReduceWholeGradients() {
    for (Candidate* candidate : candidates_) {
      Candidate& c = *candidate;
      if (!c.whole_reason.empty()) {
        size_t index = static_cast<size_t>(c.signature.num_scalars);
        while (c.optimizer->input(index) != c.slot.grad) ++index;
        c.slot.grad = AllReduce(c.slot.grad, *c.optimizer, index);
        layout_.whole.push_back({std::string(c.slot.param->name()), c.whole_reason});
      }
    }
    if (unknown_updates_.empty()) return;
    const std::unordered_set<const Value*> bound(binding_old_values_.begin(),
                                                 binding_old_values_.end());
    StepConstantCache step_constants;  // AllReduce reads gradients only: no optimizer changes
    for (Node* node : unknown_updates_) {
      for (size_t i = 0; i < node->num_inputs(); ++i) {
        Value* input = node->input(i);
        if (input == nullptr) continue;
        if (input->initializer() != nullptr) {
          if (bound.count(input) > 0) {
            layout_.whole.push_back({std::string(input->name()),
                                     StrCat("optimizer ", node->op_type(), " is not supported")});
          }
          continue;
        }
        if (FindGradientChain(*input, &step_constants).backward_op != nullptr) {
          AllReduce(input, *node, i);
        }
      }
    }
  }

  void UpdateMetadata(std::string layout_json) {
    // Entries whose new value a sharded update no longer makes are dropped; values are compared,
    // as resolved before the rewrite renamed anything.
    std::vector<char> dropped(static_cast<size_t>(graph_.value_id_bound()), 0);
    for (size_t i = 0; i < candidates_.size(); ++i) {
      if (!is_sharded_[i]) continue;
      dropped[static_cast<size_t>(candidates_[i]->slot.new_param->id())] = 1;
      for (const Value* state : candidates_[i]->slot.new_states) {
        dropped[static_cast<size_t>(state->id())] = 1;
      }
    }
    const std::span<const std::pair<std::string_view, std::string_view>> names =
        binding_names_.entries();
    std::vector<std::pair<std::string_view, std::string_view>> binding;
    binding.reserve(names.size() + binding_.size());
    for (size_t k = 0; k < names.size(); ++k) {
      const Value* new_value = binding_new_values_[k];
      if (new_value != nullptr && dropped[static_cast<size_t>(new_value->id())]) continue;
      binding.push_back(names[k]);
    }
    for (const auto& [new_name, old_name] : binding_) binding.emplace_back(new_name, old_name);
    spec_.nranks = options_.nranks;
    spec_.layout = std::move(layout_json);
    WriteTrainingSpec(spec_, binding, graph_);
    graph_.SetOpsetVersion(kZerographDomain, 1);
  }

  std::string Stats() const {
    std::string out = StrCat(
        "  buckets: ", layout_.buckets.size(), " for ", options_.nranks, " ranks, filled in ",
        options_.bucket_order == BucketOrder::kGradientReady ? "gradient-ready" : "parameter",
        " order, limit ", options_.comm_buffer_mb, " MiB\n");
    for (const LayoutManifest::Bucket& bucket : layout_.buckets) {
      int64_t padding = 0;
      for (const LayoutManifest::Param& param : bucket.params)
        padding += param.padded - param.numel;
      out += StrCat("  bucket ", bucket.id, ": ", DataTypeName(bucket.dtype), ", ",
                    bucket.params.size(), " parameters, ", bucket.total, " elements, shard ",
                    bucket.shard_size, ", padding ",
                    padding * static_cast<int64_t>(ElementSize(bucket.dtype)), " bytes, ",
                    bucket.optimizer, "\n");
    }
    out += StrCat("  padding: ", padding_bytes_, " bytes in all\n");
    if (options_.master_weights) {
      out += master_buckets_ > 0
                 ? StrCat("  master weights: fp32 copies in ", master_buckets_, " bucket(s)",
                          options_.master_grads ? ", gradients reduced in fp32" : "", "\n")
                 : "  master weights: none (no fp16/bf16 bucket)\n";
    }
    out += StrCat("  parameters left whole: ", layout_.whole.size(), "\n");
    for (const LayoutManifest::WholeParam& param : layout_.whole) {
      out += StrCat("    ", param.name, ": ", param.reason, "\n");
    }
    return out;
  }

  Graph& graph_;
  const ShardingStage1Pass::Options& options_;
  LayoutManifest& layout_;
  GradientChainHandoff* chain_handoff_;  // null: keeps no chain
  TrainingSpec spec_;
  std::optional<CandidateSweep> sweep_;
  // In schedule order, held by the sweep.
  std::vector<Candidate*> candidates_;
  std::vector<Node*> unknown_updates_;
  // By value id: whether the state binding names the value as new.
  std::vector<char> is_bound_new_value_;
  // Communication goes before the first update that is sharded (seed: after backward).
  Node* first_sharded_update_ = nullptr;
  // By candidate: whether its parameter went into a bucket.
  std::vector<char> is_sharded_;
  // Made on another thread (MakeViewRecords), which reads the candidates: declared after them, so
  // that it is waited for before they go.
  std::shared_future<ViewRecords> view_records_;
  // The state binding's new values and the initializers they replace, entry by entry, resolved
  // before any edit.
  std::vector<const Value*> binding_new_values_;
  std::vector<const Value*> binding_old_values_;
  StateBindingNames binding_names_;
  std::vector<std::pair<std::string, std::string>> binding_;
  int64_t padding_bytes_ = 0;
  int64_t master_buckets_ = 0;
};

}  // namespace

StatusOr<bool> ShardingStage1Pass::RunImpl(Graph& graph) {
  if (chain_handoff_ != nullptr) chain_handoff_->Clear();
  ShardingRewriter rewriter(graph, options_, layout_, chain_handoff_);
  return rewriter.Run(std::exchange(loaded_spec_, std::nullopt), stats_);
}

}  // namespace zerograph
