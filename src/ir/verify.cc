#include "zerograph/ir/verify.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "core/parallelism.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph {
namespace {

// Nodes checked per task: each task looks their names up in bulk (see Verify).
constexpr size_t kVerifyChunk = 1024;
// Nodes from which a checking thread pays for its start.
constexpr size_t kNodesPerThread = 50000;

std::string Label(const Node& node) {
  if (node.name().empty()) return StrCat("node #", node.id(), " (", node.op_type(), ")");
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

// Every use recorded on `value` must be an input edge that reads it.
Status CheckUsers(const Value& value) {
  for (const Use& use : value.users()) {
    ZG_RETURN_IF_NOT(use.input_index >= 0 &&
                         static_cast<size_t>(use.input_index) < use.node->num_inputs() &&
                         use.node->input(static_cast<size_t>(use.input_index)) == &value,
                     "value '", value.name(), "' lists ", Label(*use.node), " input ",
                     use.input_index, " as a user, but that input reads something else");
  }
  return Status::Ok();
}

std::vector<std::string_view> NamesOf(std::span<const Value* const> values) {
  std::vector<std::string_view> names;
  names.reserve(values.size());
  for (const Value* value : values) names.push_back(value->name());
  return names;
}

// Runs `check(c)` for every chunk on up to `threads` threads, keeping each chunk's error; returns
// the first by chunk, so that the message does not depend on which thread was faster.
template <typename Check>
Status InChunks(size_t chunks, int threads, const Check& check) {
  std::vector<Status> errors(chunks);
  std::atomic<size_t> first_error{chunks};
  Status ran = ParallelFor(chunks, threads, [&](size_t c) {
    // A chunk after one that failed cannot change the answer.
    if (c > first_error.load(std::memory_order_relaxed)) return Status::Ok();
    errors[c] = check(c);
    if (!errors[c].ok()) {
      size_t seen = first_error.load(std::memory_order_relaxed);
      while (c < seen && !first_error.compare_exchange_weak(seen, c)) {
      }
    }
    return Status::Ok();
  });
  ZG_RETURN_IF_ERROR(ran);
  for (Status& error : errors) {
    if (!error.ok()) return std::move(error);
  }
  return Status::Ok();
}

// Checks `node` against the contract of its op at the graph's opset, if it has one.
Status CheckContract(GraphContracts& contracts, const Node& node) {
  const OpContract* contract = contracts.Find(node);
  if (contract == nullptr) return Status::Ok();
  return CheckNodeAgainstContract(node, *contract, AttributeCheck::kRequired);
}

// The checks, in chunks of the schedule that threads take in turn; the first error in schedule
// order is reported.
class Verifier {
 public:
  explicit Verifier(const Graph& graph)
      : graph_(graph),
        sources_(static_cast<size_t>(graph.value_id_bound()), 0),
        scheduled_(static_cast<size_t>(graph.node_id_bound()), 0),
        edges_(static_cast<size_t>(graph.value_id_bound())) {}

  Status Run() {
    // Graph inputs and initializers must be the graph's values of their names.
    for (const std::vector<Value*>& sources : {graph_.inputs(), graph_.initializers()}) {
      const std::vector<Value*> found = graph_.FindValues(NamesOf(sources));
      for (size_t i = 0; i < sources.size(); ++i) {
        ZG_RETURN_IF_ERROR(CheckSource(*sources[i], found[i]));
        sources_[static_cast<size_t>(sources[i]->id())] = 1;
      }
    }
    // The schedule's links, walked once; the rest of the checks need no order of their own.
    const Node* previous = nullptr;
    for (const Node* node : graph_.nodes()) {
      ZG_RETURN_IF_NOT(node->prev() == previous, Label(*node), ": schedule links are inconsistent");
      ZG_RETURN_IF_NOT(previous == nullptr || previous->IsBefore(*node), Label(*node),
                       ": order key is not after its predecessor's");
      scheduled_[static_cast<size_t>(node->id())] = 1;
      schedule_.push_back(node);
      previous = node;
    }
    ZG_RETURN_IF_NOT(previous == graph_.last_node(), "the schedule's last node is inconsistent");
    ZG_RETURN_IF_NOT(schedule_.size() == graph_.num_nodes(), "the schedule holds ",
                     schedule_.size(), " nodes, but the graph counts ", graph_.num_nodes());

    const size_t chunks = (schedule_.size() + kVerifyChunk - 1) / kVerifyChunk;
    const int threads = ThreadsFor(schedule_.size(), kNodesPerThread);
    ZG_RETURN_IF_ERROR(InChunks(chunks, threads, [&](size_t c) { return CheckNodes(c); }));
    // Input edges per value, counted above: CheckUsers showed every listed use is an edge; equal
    // counts then show every edge is listed (searching the use list per edge is quadratic for
    // values such as the learning rate that thousands of nodes read).
    for (const std::vector<Value*>& sources : {graph_.inputs(), graph_.initializers()}) {
      for (const Value* source : sources) ZG_RETURN_IF_ERROR(CheckEdgeCount(*source));
    }
    for (const Value* source : sparse_sources_) ZG_RETURN_IF_ERROR(CheckEdgeCount(*source));
    ZG_RETURN_IF_ERROR(InChunks(chunks, threads, [&](size_t c) {
      for (const Node* node : ChunkOf(c)) {
        for (const Value* output : node->outputs()) {
          if (output != nullptr) ZG_RETURN_IF_ERROR(CheckEdgeCount(*output));
        }
      }
      return Status::Ok();
    }));

    const std::vector<Value*> found_outputs = graph_.FindValues(NamesOf(graph_.outputs()));
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      const Value* output = graph_.outputs()[i];
      ZG_RETURN_IF_NOT(output->producer() == nullptr || IsDefinedByItsProducer(*output),
                       "graph output '", output->name(), "' is not defined");
      ZG_RETURN_IF_NOT(found_outputs[i] == output, "graph output '", output->name(),
                       "' refers to an erased value");
    }
    return Status::Ok();
  }

 private:
  std::span<const Node* const> ChunkOf(size_t c) const {
    const size_t begin = c * kVerifyChunk;
    return std::span(schedule_).subspan(begin, std::min(kVerifyChunk, schedule_.size() - begin));
  }

  // `found` is graph.FindValue(value.name()).
  static Status CheckSource(const Value& value, const Value* found) {
    ZG_RETURN_IF_NOT(found == &value, "value '", value.name(),
                     "' is not the graph's value of that name (erased or renamed)");
    return CheckUsers(value);
  }

  // Whether `value`'s producer is in the schedule and lists it as its output.
  bool IsDefinedByItsProducer(const Value& value) const {
    const Node* producer = value.producer();
    const auto index = static_cast<size_t>(value.producer_output_index());
    return scheduled_[static_cast<size_t>(producer->id())] && index < producer->num_outputs() &&
           producer->output(index) == &value;
  }

  Status CheckEdgeCount(const Value& value) const {
    const int64_t edges = edges_[static_cast<size_t>(value.id())].load(std::memory_order_relaxed);
    ZG_RETURN_IF_NOT(static_cast<size_t>(edges) == value.users().size(), "value '", value.name(),
                     "' lists ", value.users().size(), " uses, but nodes read it ", edges,
                     " times");
    return Status::Ok();
  }

  // Every name is looked up to check that the graph's name index agrees with the nodes. The
  // lookups are done in bulk (a chunk of nodes at a time, FindValues / FindNodes), which overlaps
  // their cache misses: one at a time, they are most of the time Verify takes on a large graph.
  Status CheckNodes(size_t c) {
    const std::span<const Node* const> chunk = ChunkOf(c);
    std::vector<std::string_view> node_names, output_names;
    for (const Node* node : chunk) {
      node_names.push_back(node->name());
      for (const Value* output : node->outputs()) {
        if (output != nullptr) output_names.push_back(output->name());
      }
    }
    const std::vector<Node*> found_nodes = graph_.FindNodes(node_names);
    const std::vector<Value*> found_outputs = graph_.FindValues(output_names);
    GraphContracts contracts(graph_);
    size_t next_output = 0;  // in found_outputs
    for (size_t k = 0; k < chunk.size(); ++k) {
      const Node* node = chunk[k];
      if (!node->name().empty()) {
        ZG_RETURN_IF_NOT(found_nodes[k] == node, Label(*node), ": another node has the same name");
      }
      for (size_t i = 0; i < node->num_inputs(); ++i) {
        const Value* input = node->input(i);
        if (input == nullptr) continue;
        if (input->producer() != nullptr) {
          ZG_RETURN_IF_NOT(IsDefinedByItsProducer(*input) && input->producer()->IsBefore(*node),
                           Label(*node), " reads '", input->name(), "' before ",
                           Label(*input->producer()), " defines it (not in topological order)");
        } else if (!sources_[static_cast<size_t>(input->id())]) {
          // A source that is neither a graph input nor an initializer: a sparse initializer.
          ZG_RETURN_IF_ERROR(AddSparseSource(*input));
        }
        edges_[static_cast<size_t>(input->id())].fetch_add(1, std::memory_order_relaxed);
      }
      for (size_t i = 0; i < node->num_outputs(); ++i) {
        const Value* output = node->output(i);
        if (output == nullptr) continue;
        ZG_RETURN_IF_NOT(
            output->producer() == node && output->producer_output_index() == static_cast<int>(i),
            Label(*node), ": output ", i, " '", output->name(), "' names another producer");
        ZG_RETURN_IF_NOT(found_outputs[next_output++] == output, Label(*node), ": output '",
                         output->name(), "' is defined more than once");
        ZG_RETURN_IF_ERROR(CheckUsers(*output));
      }
      ZG_RETURN_IF_ERROR(CheckContract(contracts, *node));
    }
    return Status::Ok();
  }

  Status AddSparseSource(const Value& value) {
    ZG_RETURN_IF_ERROR(CheckSource(value, graph_.FindValue(value.name())));
    std::lock_guard<std::mutex> lock(sparse_mutex_);
    if (std::find(sparse_sources_.begin(), sparse_sources_.end(), &value) ==
        sparse_sources_.end()) {
      sparse_sources_.push_back(&value);
    }
    return Status::Ok();
  }

  const Graph& graph_;
  std::vector<char> sources_;    // by value id: graph inputs and initializers
  std::vector<char> scheduled_;  // by node id
  std::vector<const Node*> schedule_;
  std::vector<std::atomic<int64_t>> edges_;  // by value id: input edges reading the value
  std::mutex sparse_mutex_;
  std::vector<const Value*> sparse_sources_;  // a handful at most
};

}  // namespace

Status Verify(const Graph& graph) { return Verifier(graph).Run(); }

Status VerifyContracts(const Graph& graph) {
  const auto stored = static_cast<size_t>(graph.node_id_bound());
  const size_t chunks = (stored + kVerifyChunk - 1) / kVerifyChunk;
  return InChunks(chunks, ThreadsFor(stored, kNodesPerThread), [&](size_t c) {
    GraphContracts contracts(graph);
    for (const Node* node : graph.stored_nodes(c, chunks)) {
      ZG_RETURN_IF_ERROR(CheckContract(contracts, *node));
    }
    return Status::Ok();
  });
}

}  // namespace zerograph
