#include "zerograph/ir/shape_inference.h"

#include <algorithm>
#include <charconv>
#include <span>
#include <string_view>
#include <utility>

#include "core/parallelism.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node_sweep.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph {
namespace {

// An initializer's bytes as a HostValue, for the host-read inputs of shape functions.
std::optional<HostValue> InitializerValue(const Value& value) {
  const Tensor* tensor = value.initializer();
  if (tensor == nullptr) return std::nullopt;
  StatusOr<std::span<const std::byte>> bytes = tensor->Bytes();
  if (!bytes.ok()) return std::nullopt;
  return HostValue{tensor->dtype(), tensor->dims(), *bytes};
}

// Whether a recorded type makes a spec: a known dtype and every dimension known.
bool IsComplete(DataType dtype, std::span<const int64_t> dims) {
  return dtype != DataType::kUndefined &&
         std::ranges::all_of(dims, [](int64_t d) { return d >= 0; });
}

// Whether RecordedSpec(value) has a value, without copying an initializer's dimensions:
// KnowableShapes asks it of every initializer, hundreds of thousands in a graph of many small
// parameters.
bool HasRecordedSpec(const Value& value) {
  if (const Tensor* tensor = value.initializer()) {
    return IsComplete(tensor->dtype(), tensor->dims());
  }
  return RecordedSpec(value).has_value();
}

// Initializers KnowableShapes judges per task, and from which a thread pays for its start.
constexpr size_t kKnowableChunk = 4096;
constexpr size_t kKnowablePerThread = 50000;

int GraphRanks(const Graph& graph) {
  std::optional<std::string_view> text = graph.GetMetadata("zerograph.nranks");
  int nranks = 1;
  if (text) std::from_chars(text->data(), text->data() + text->size(), nranks);
  return nranks >= 1 ? nranks : 1;
}

std::string Label(const Node& node) {
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

}  // namespace

std::optional<TensorSpec> RecordedSpec(const Value& value) {
  // An initializer's dimensions are copied once, not through Value::type() and again.
  if (const Tensor* tensor = value.initializer()) {
    const std::span<const int64_t> dims = tensor->dims();
    if (!IsComplete(tensor->dtype(), dims)) return std::nullopt;
    return TensorSpec{tensor->dtype(), Shape(dims.begin(), dims.end())};
  }
  std::optional<TensorType> type = value.type();
  if (!type || !type->dims || !IsComplete(type->dtype, *type->dims)) return std::nullopt;
  return TensorSpec{type->dtype, std::move(*type->dims)};
}

const TensorSpec* InferredShapes::Find(const Value& value) const {
  const size_t id = static_cast<size_t>(value.id());
  return id < specs_.size() && specs_[id] ? &*specs_[id] : nullptr;
}

StatusOr<InferredShapes> InferShapes(const Graph& graph, int nranks) {
  InferredShapes shapes;
  shapes.specs_.resize(static_cast<size_t>(graph.value_id_bound()));
  auto record = [&](const Value& value) {
    std::optional<TensorSpec>& slot = shapes.specs_[static_cast<size_t>(value.id())];
    slot = RecordedSpec(value);
    if (slot) ++shapes.known_;
  };
  for (const Value* value : graph.inputs()) record(*value);
  for (const Value* value : graph.initializers()) record(*value);

  const int ranks = nranks > 0 ? nranks : GraphRanks(graph);
  std::vector<const TensorSpec*> inputs;
  std::vector<std::optional<HostValue>> host_values;
  std::vector<const HostValue*> values;
  GraphContracts contracts(graph);
  for (const Node* node : graph.nodes()) {
    const OpContract* contract = contracts.Find(*node);
    inputs.assign(node->num_inputs(), nullptr);
    host_values.assign(node->num_inputs(), std::nullopt);
    values.assign(node->num_inputs(), nullptr);
    // Known when every input is, and so is the value of every host-read input (a shape computed
    // at run time leaves the outputs unknown).
    bool known = contract != nullptr;
    for (size_t i = 0; i < node->num_inputs() && known; ++i) {
      const Value* input = node->input(i);
      if (input == nullptr) continue;
      inputs[i] = shapes.Find(*input);
      known = inputs[i] != nullptr;
      if (known && contract->IsHostInput(i)) {
        host_values[i] = InitializerValue(*input);
        known = host_values[i].has_value();
        values[i] = known ? &*host_values[i] : nullptr;
      }
    }
    std::optional<std::vector<TensorSpec>> specs;
    if (known) {
      StatusOr<std::vector<TensorSpec>> inferred =
          contract->infer(ShapeContext{node, inputs, values, ranks});
      if (!inferred.ok()) return std::move(inferred).status().WithContext(Label(*node));
      ZG_RET_CHECK(inferred->size() == node->num_outputs(), Label(*node), " inferred ",
                   inferred->size(), " outputs for ", node->num_outputs());
      specs = std::move(*inferred);
    }
    for (size_t o = 0; o < node->num_outputs(); ++o) {
      const Value* output = node->output(o);
      if (output == nullptr) continue;
      record(*output);
      std::optional<TensorSpec>& slot = shapes.specs_[static_cast<size_t>(output->id())];
      if (!specs) continue;
      TensorSpec& inferred = (*specs)[o];
      if (!slot) {
        slot = std::move(inferred);
        ++shapes.known_;
        ++shapes.inferred_;
        continue;
      }
      ZG_RETURN_IF_NOT(*slot == inferred, Label(*node), ": output '", output->name(),
                       "' is recorded as ", DataTypeName(slot->dtype), ShapeToString(slot->shape),
                       " but its inputs make it ", DataTypeName(inferred.dtype),
                       ShapeToString(inferred.shape));
    }
  }
  return shapes;
}

void KnowableShapeSweep::Add(const Node* node) {
  const OpContract* contract = node->contract();
  bool known = contract != nullptr;
  for (size_t i = 0; i < node->num_inputs(); ++i) {
    const Value* input = node->input(i);
    if (input == nullptr) continue;
    if (known && contract->IsHostInput(i)) known = InitializerValue(*input).has_value();
    // A source that is neither a graph input nor an initializer: a sparse initializer.
    if (input->producer() == nullptr && !input->is_graph_input() &&
        input->initializer() == nullptr) {
      unknowable_sources_.push_back(input);
    }
  }
  if (known) return;
  for (const Value* output : node->outputs()) {
    if (output != nullptr) unsure_outputs_.push_back(output);
  }
}

void KnowableShapeSweep::Merge(KnowableShapeSweep&& other) {
  unsure_outputs_.insert(unsure_outputs_.end(), other.unsure_outputs_.begin(),
                         other.unsure_outputs_.end());
  unknowable_sources_.insert(unknowable_sources_.end(), other.unknowable_sources_.begin(),
                             other.unknowable_sources_.end());
}

// Shapes are knowable everywhere except downstream of where they break: a source without a
// recorded complete type, or an output, without one either, of a node with no contract or with a
// host-read input that is not an initializer. So each value is knowable unless found to break
// (every value is a source, judged here, or an output, judged by Add), and only what lies
// downstream of a break is walked, through the users, stopping at recorded types; in a graph of
// known ops that is nothing.
std::vector<char> KnowableShapeSweep::Finish(const Graph& graph) const {
  std::vector<char> knowable(static_cast<size_t>(graph.value_id_bound()), 1);
  const std::vector<Value*> initializers = graph.initializers();
  const size_t chunks = (initializers.size() + kKnowableChunk - 1) / kKnowableChunk;
  std::vector<std::vector<const Value*>> breaks(chunks);
  const Status judged =
      ParallelFor(chunks, ThreadsFor(initializers.size(), kKnowablePerThread), [&](size_t c) {
        const size_t end = std::min(initializers.size(), (c + 1) * kKnowableChunk);
        for (size_t i = c * kKnowableChunk; i < end; ++i) {
          if (!HasRecordedSpec(*initializers[i])) breaks[c].push_back(initializers[i]);
        }
        return Status::Ok();
      });
  ZG_CHECK(judged.ok(), judged.message());
  std::vector<const Value*> unknowable = unknowable_sources_;
  for (const Value* value : graph.inputs()) {
    if (value->initializer() == nullptr && !HasRecordedSpec(*value)) unknowable.push_back(value);
  }
  for (const Value* output : unsure_outputs_) {
    if (!HasRecordedSpec(*output)) unknowable.push_back(output);
  }
  for (const std::vector<const Value*>& found : breaks) {
    unknowable.insert(unknowable.end(), found.begin(), found.end());
  }
  if (unknowable.empty()) return knowable;
  // Downstream of the breaks: an output without a recorded type is unknowable when an input is.
  std::vector<char> seen(knowable.size(), 0);
  for (const Value* value : unknowable) seen[static_cast<size_t>(value->id())] = 1;
  for (size_t next = 0; next < unknowable.size(); ++next) {
    const Value& value = *unknowable[next];
    knowable[static_cast<size_t>(value.id())] = 0;
    for (const Use& use : value.users()) {
      for (const Value* output : use.node->outputs()) {
        if (output == nullptr || seen[static_cast<size_t>(output->id())]) continue;
        if (HasRecordedSpec(*output)) continue;
        seen[static_cast<size_t>(output->id())] = 1;
        unknowable.push_back(output);
      }
    }
  }
  return knowable;
}

std::vector<char> KnowableShapes(const Graph& graph) {
  return SweepStoredNodes<KnowableShapeSweep>(graph).Finish(graph);
}

}  // namespace zerograph
