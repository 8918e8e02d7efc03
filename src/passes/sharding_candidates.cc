#include "passes/sharding_candidates.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "zerograph/ir/graph.h"
#include "zerograph/passes/gradient_chain.h"

namespace zerograph {
namespace {

// A thread sweeping the nodes pays for its start from this many nodes on.
constexpr size_t kNodesPerThread = 25'000;
// Slices are claimed one at a time, as the work is uneven: a training graph has its optimizer
// nodes together, at the end.
constexpr size_t kNodesPerSlice = 10'000;
// A thread reading what the candidates need pays for its start from this many candidates on.
constexpr size_t kCandidatesPerThread = 2'000;

std::string_view DtypeName(const Value* value) {
  return DataTypeName(value == nullptr ? DataType::kUndefined : value->dtype());
}

template <typename T>
void AppendBytes(const T& value, std::string& out) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// `text` preceded by its length, so that consecutive fields cannot run into each other.
void AppendSized(std::string_view text, std::string& out) {
  AppendBytes(text.size(), out);
  out += text;
}

// Writes what must match for two parameters to share a bucket (optimizer, attributes, scalar and
// control inputs, dtypes) into `key`: equal keys may be fused into one update. Built in a buffer
// the caller reuses, as it is made for every parameter.
void CombineKey(const Candidate& c, std::string& key) {
  key.clear();
  key += c.signature.domain;
  key += '.';
  key += c.signature.op_type;
  for (const Value* value : {c.slot.param, c.slot.grad}) {
    key += '|';
    key += DtypeName(value);
  }
  for (const Value* state : c.slot.states) {
    key += '|';
    key += DtypeName(state);
  }
  for (int i = 0; i < c.signature.num_scalars; ++i) {
    const Value* scalar = c.optimizer->input(static_cast<size_t>(i));
    key += '|';
    if (scalar != nullptr) key += scalar->name();
  }
  if (const Value* control = OptimizerControl(*c.optimizer, c.signature)) {
    key += "|control=";
    key += control->name();
  }
  // Straight over the attribute messages: AttributeNames + FindAttribute would search the list
  // once per attribute, for every parameter. The scalar kinds optimizers use are written as their
  // bytes; serializing each attribute cost more than the rest of the key.
  for (const onnx::AttributeProto& attr : c.optimizer->proto().attribute()) {
    if (attr.name().starts_with("__")) continue;
    AppendSized(attr.name(), key);
    key += static_cast<char>(attr.type());
    switch (attr.type()) {
      case onnx::AttributeProto::FLOAT:
        AppendBytes(attr.f(), key);
        break;
      case onnx::AttributeProto::INT:
        AppendBytes(attr.i(), key);
        break;
      case onnx::AttributeProto::STRING:
        AppendSized(attr.s(), key);
        break;
      default:
        AppendSized(attr.SerializeAsString(), key);
        break;
    }
  }
}

// Why `c`'s parameter cannot be sharded, or "" when it can. (Readers of the updated parameter
// are no reason: they get a view of the gathered buffer.)
std::string WholeReason(const Candidate& c) {
  const Value* param = c.slot.param;
  if (param->initializer() == nullptr) return "the parameter is not an initializer";
  // (IR < 4 lists initializers among the inputs.) Its name stays an input, so no view can take it.
  if (param->is_graph_input()) return "the parameter is also a graph input";
  const DataType dtype = param->initializer()->dtype();
  if (PaddingGranularity(dtype, 1) == 0) {
    return StrCat("element type ", DataTypeName(dtype),
                  " cannot be sharded (fp32, fp16, bf16 can)");
  }
  const int64_t numel = param->initializer()->numel();
  for (const Value* state : c.slot.states) {
    if (state == nullptr || state->initializer() == nullptr) {
      return "an optimizer state is not an initializer";
    }
    if (state->initializer()->numel() != numel) {
      return StrCat("optimizer state '", state->name(), "' does not match the parameter's size");
    }
    if (PaddingGranularity(state->initializer()->dtype(), 1) == 0) {
      return StrCat("optimizer state '", state->name(),
                    "' has an element type that cannot be sharded");
    }
  }
  if (std::optional<TensorType> grad_type = c.slot.grad->type()) {
    if (std::optional<int64_t> grad_numel = grad_type->numel();
        grad_numel && *grad_numel != numel) {
      return StrCat("gradient '", c.slot.grad->name(), "' does not match the parameter's size");
    }
  }
  for (const Value* new_state : c.slot.new_states) {
    if (!new_state->users().empty()) {
      return StrCat("updated state '", new_state->name(), "' is read by other nodes");
    }
  }
  return {};
}

// Fills what the rewrite needs of a parameter that can be sharded.
void ReadShardable(Candidate& c) {
  const Tensor& tensor = *c.slot.param->initializer();
  c.tensor = &tensor;
  c.param_type = *c.slot.param->type();
  c.layout.name = std::string(c.slot.param->name());
  c.layout.shape.assign(tensor.dims().begin(), tensor.dims().end());
  c.layout.numel = tensor.numel();
  for (const Value* state : c.slot.states) {
    c.state_tensors.push_back(state->initializer());
    c.layout.states.emplace_back(state->name());
  }
  c.new_param_typed = c.slot.new_param->type().has_value();
  const Node* producer = c.slot.grad->producer();
  c.grad_producer_key =
      producer != nullptr ? producer->schedule_key() : std::numeric_limits<int64_t>::min();
}

// Whether `node` makes a graph output, as a node that updates state does: the state binding's
// new values are graph outputs.
bool MayUpdateState(const Node& node) {
  const std::span<Value* const> outputs = node.outputs();
  return std::any_of(outputs.begin(), outputs.end(), [](const Value* output) {
    return output != nullptr && output->is_graph_output();
  });
}

bool IsCollective(const Node& node) {
  return node.domain() == kZerographDomain &&
         (node.op_type() == "ReduceScatter" || node.op_type() == "AllGather" ||
          node.op_type() == "CoalesceTensors");
}

}  // namespace

CandidateSweep::CandidateSweep(const Graph& graph)
    : graph_(graph), slices_((graph.node_id_bound() + kNodesPerSlice - 1) / kNodesPerSlice) {
  // The caller's thread joins in Finish, after its own reading.
  // However many start, they and the caller's thread sweep it all.
  StartThreads(
      static_cast<size_t>(ThreadsFor(graph.num_nodes(), kNodesPerThread) - 1),
      [this] { SweepSlices(); }, workers_);
}

CandidateSweep::~CandidateSweep() {
  next_slice_ = slices_.size();  // whatever is left is not needed
  for (std::thread& worker : workers_) worker.join();
}

void CandidateSweep::SweepSlices() {
  for (size_t i; (i = next_slice_.fetch_add(1, std::memory_order_relaxed)) < slices_.size();) {
    SweepSlice(i);
  }
}

void CandidateSweep::SweepSlice(size_t index) {
  Slice& slice = slices_[index];
  for (Node* node : graph_.stored_nodes(index, slices_.size())) {
    if (IsCollective(*node)) {
      slice.status = InvalidArgumentError(StrCat("the graph is already rewritten: node '",
                                                 node->name(), "' is a ", node->op_type()));
      return;
    }
    std::optional<OptimizerSignature> signature = FindOptimizerSignature(*node);
    if (!signature) {
      if (node->role() == OpRole::kOptimize && MayUpdateState(*node)) {
        slice.other_optimize_nodes.push_back(node);
      }
      continue;
    }
    StatusOr<std::vector<OptimizerSlot>> slots = OptimizerSlots(*node, *signature);
    if (!slots.ok()) {
      slice.status = slots.status();
      return;
    }
    const size_t needed = slice.candidates.size() + slots->size();
    if (needed > slice.candidates.capacity()) {
      slice.candidates.reserve(std::max(needed, 2 * slice.candidates.capacity()));
    }
    for (OptimizerSlot& slot : *slots) {
      Candidate& c = slice.candidates.emplace_back();
      c.slot = std::move(slot);
      c.optimizer = node;
      c.signature = *signature;
    }
  }
}

void CandidateSweep::ReadCandidates(std::span<Candidate* const> part,
                                    std::vector<std::string>& keys,
                                    std::vector<Node*>& chain_nodes) {
  StepConstantCache step_constants;  // nothing is edited while reading
  std::unordered_map<std::string, int64_t> key_ids;
  std::string key;
  std::vector<size_t> chain_begins;
  chain_begins.reserve(part.size() + 1);
  for (Candidate* candidate : part) {
    Candidate& c = *candidate;
    GradientChain chain = FindGradientChain(*c.slot.grad, &step_constants);
    c.ready = chain.backward_op != nullptr ? chain.backward_op : c.slot.grad->producer();
    c.chain_reaches_ready = chain.backward_op != nullptr;
    chain_begins.push_back(chain_nodes.size());
    chain_nodes.insert(chain_nodes.end(), chain.chain.begin(), chain.chain.end());
    c.whole_reason = WholeReason(c);
    if (c.whole_reason.empty()) ReadShardable(c);
    CombineKey(c, key);
    auto [id, added] = key_ids.try_emplace(key, static_cast<int64_t>(key_ids.size()));
    if (added) keys.push_back(key);
    c.key = id->second;
  }
  chain_begins.push_back(chain_nodes.size());
  for (size_t i = 0; i < part.size(); ++i) {
    part[i]->chain = std::span<Node* const>(chain_nodes)
                         .subspan(chain_begins[i], chain_begins[i + 1] - chain_begins[i]);
  }
}

StatusOr<CandidateSweep::Found> CandidateSweep::Finish() {
  SweepSlices();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();

  Found found;
  size_t count = 0;
  for (const Slice& slice : slices_) count += slice.candidates.size();
  found.candidates.reserve(count);
  for (Slice& slice : slices_) {
    ZG_RETURN_IF_ERROR(slice.status);
    for (Candidate& c : slice.candidates) found.candidates.push_back(&c);
    found.other_optimize_nodes.insert(found.other_optimize_nodes.end(),
                                      slice.other_optimize_nodes.begin(),
                                      slice.other_optimize_nodes.end());
  }
  // Nodes are made in schedule order until a pass moves or adds some.
  auto by_optimizer = [](const Candidate* a, const Candidate* b) {
    return a->optimizer->IsBefore(*b->optimizer);
  };
  if (!std::is_sorted(found.candidates.begin(), found.candidates.end(), by_optimizer)) {
    std::stable_sort(found.candidates.begin(), found.candidates.end(), by_optimizer);
  }
  std::sort(found.other_optimize_nodes.begin(), found.other_optimize_nodes.end(),
            [](const Node* a, const Node* b) { return a->IsBefore(*b); });

  // What each candidate needs is read in parts of the candidates, not of the nodes: one optimizer
  // node may update every parameter of the model. Keys are numbered per part, then across them.
  const int threads = ThreadsFor(found.candidates.size(), kCandidatesPerThread);
  const auto parts = static_cast<size_t>(threads);
  const std::span<Candidate* const> candidates = found.candidates;
  auto part_of = [&](size_t part) {
    const size_t begin = candidates.size() * part / parts;
    return candidates.subspan(begin, candidates.size() * (part + 1) / parts - begin);
  };
  std::vector<std::vector<std::string>> part_keys(parts);
  chain_nodes_.assign(parts, {});
  const Status read = ParallelFor(parts, threads, [&](size_t part) {
    ReadCandidates(part_of(part), part_keys[part], chain_nodes_[part]);
    return Status::Ok();
  });
  ZG_CHECK(read.ok(), "reading candidates cannot fail: ", read.ToString());
  std::unordered_map<std::string, int64_t> key_ids;
  std::vector<int64_t> ids;
  for (size_t part = 0; part < parts; ++part) {
    ids.clear();
    for (std::string& key : part_keys[part]) {
      ids.push_back(key_ids.try_emplace(std::move(key), key_ids.size()).first->second);
    }
    for (Candidate* c : part_of(part)) c->key = ids[static_cast<size_t>(c->key)];
  }

  // By value id: whether a candidate before reads it as a gradient / updates it as a parameter.
  // Flags, not the nodes: a million-parameter graph has a few million value ids, and only a
  // refusal needs the earlier node, found again then.
  std::vector<bool> grad_seen(static_cast<size_t>(graph_.value_id_bound()));
  std::vector<bool> param_seen(grad_seen.size());
  auto first_with = [&](auto same) {
    return *std::find_if(found.candidates.begin(), found.candidates.end(), same);
  };
  for (const Candidate* c : found.candidates) {
    if (grad_seen[static_cast<size_t>(c->slot.grad->id())]) {
      const Candidate* first =
          first_with([&](const Candidate* o) { return o->slot.grad == c->slot.grad; });
      return InvalidArgumentError(StrCat("gradient '", c->slot.grad->name(),
                                         "' feeds two optimizer updates ('",
                                         first->optimizer->name(), "' and '", c->optimizer->name(),
                                         "'); each gradient must update exactly one parameter"));
    }
    grad_seen[static_cast<size_t>(c->slot.grad->id())] = true;
    if (param_seen[static_cast<size_t>(c->slot.param->id())]) {
      const Candidate* first =
          first_with([&](const Candidate* o) { return o->slot.param == c->slot.param; });
      return InvalidArgumentError(
          StrCat("parameter '", c->slot.param->name(), "' is updated by two optimizer nodes ('",
                 first->optimizer->name(), "' and '", c->optimizer->name(), "')"));
    }
    param_seen[static_cast<size_t>(c->slot.param->id())] = true;
  }
  return found;
}

}  // namespace zerograph
