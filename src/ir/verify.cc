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

// Nodes checked per task: each task looks their names up in bulk (see CheckNodes).
constexpr size_t kVerifyChunk = 1024;
// Nodes from which a checking thread pays for its start.
constexpr size_t kNodesPerThread = 50000;

std::string Label(const Node& node) {
  if (node.name().empty()) return StrCat("node #", node.id(), " (", node.op_type(), ")");
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

// Every use recorded on `value` must be an input edge of a node in the graph that reads it, and
// the edge must record where the use lies. Verify walks the uses only to name what is wrong once
// the counts of uses and edges disagree (Verifier::Run).
Status CheckUsers(const Value& value) {
  const std::span<const Use> users = value.users();
  for (size_t k = 0; k < users.size(); ++k) {
    const Use& use = users[k];
    ZG_RETURN_IF_NOT(!use.node->erased(), "value '", value.name(), "' lists erased ",
                     Label(*use.node), " as a user");
    const auto input = static_cast<size_t>(use.input_index);
    ZG_RETURN_IF_NOT(
        use.input_index >= 0 && input < use.node->num_inputs() && use.node->input(input) == &value,
        "value '", value.name(), "' lists ", Label(*use.node), " input ", use.input_index,
        " as a user, but that input reads something else");
    ZG_RETURN_IF_NOT(use.node->input_use_index(input) == k, "value '", value.name(), "' lists ",
                     Label(*use.node), " input ", use.input_index,
                     " as a user twice, or where the edge does not look for it");
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

// Checks `node` against the contract of its op at the graph's opset, if it has one, unless it
// passed that check and has not changed since (Node::contract_checked): the check reads only the
// node, so its answer would be the same.
Status CheckContract(GraphContracts& contracts, const Node& node) {
  const OpContract* contract = contracts.Find(node);
  if (contract == nullptr) return Status::Ok();
  if (node.contract_checked() && contract == node.contract()) return Status::Ok();
  ZG_RETURN_IF_ERROR(CheckNodeAgainstContract(node, *contract, AttributeCheck::kRequired));
  if (contract == node.contract()) node.MarkContractChecked();
  return Status::Ok();
}

// The checks, in chunks of the nodes in the order they were made, which threads take in turn;
// the first error in that order is reported. Every check is of one node and its neighbours, so
// that no thread walks the schedule, a cache miss per node on a large graph: the links of each
// node agree with its neighbours' and the order keys grow along them, only the first node starts
// the schedule and only the last ends it, so the nodes form one chain from the first to the last.
//
// Each input edge finds its own use in its value's list (the use names the edge, so no two edges
// share one), and each value an edge can read (a live node's output, a graph input, an
// initializer) is counted once with its uses: when there are as many uses as edges, every use is
// an edge's, and no use is walked (a cache miss or two per use, to its node).
class Verifier {
 public:
  explicit Verifier(const Graph& graph)
      : graph_(graph),
        sources_(static_cast<size_t>(graph.value_id_bound()), 0),
        chunks_((static_cast<size_t>(graph.node_id_bound()) + kVerifyChunk - 1) / kVerifyChunk),
        counts_(chunks_) {}

  Status Run() {
    // Graph inputs and initializers must be the graph's values of their names.
    for (const std::vector<Value*>& sources : {graph_.inputs(), graph_.initializers()}) {
      const std::vector<Value*> found = graph_.FindValues(NamesOf(sources));
      for (size_t i = 0; i < sources.size(); ++i) {
        ZG_RETURN_IF_ERROR(CheckSource(*sources[i], found[i]));
        char& counted = sources_[static_cast<size_t>(sources[i]->id())];
        if (!counted) source_uses_ += sources[i]->users().size();  // an input and initializer once
        counted = 1;
      }
    }
    const int threads = ThreadsFor(graph_.num_nodes(), kNodesPerThread);
    ZG_RETURN_IF_ERROR(InChunks(chunks_, threads, [&](size_t c) { return CheckNodes(c); }));
    ChunkCounts total{.uses = source_uses_};
    for (const ChunkCounts& counts : counts_) {
      total.nodes += counts.nodes;
      total.edges += counts.edges;
      total.uses += counts.uses;
    }
    ZG_RETURN_IF_NOT(total.nodes == graph_.num_nodes(), "the graph holds ", total.nodes,
                     " nodes, but counts ", graph_.num_nodes());
    if (total.uses != total.edges) return FindStrayUse(total);
    ZG_RETURN_IF_NOT(
        total.nodes > 0 || (graph_.first_node() == nullptr && graph_.last_node() == nullptr),
        "the graph has no nodes, but its schedule has ends");

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
  struct ChunkCounts {
    size_t nodes = 0;
    size_t edges = 0;  // inputs read
    size_t uses = 0;   // on the nodes' outputs
  };

  // `found` is graph.FindValue(value.name()).
  static Status CheckSource(const Value& value, const Value* found) {
    ZG_RETURN_IF_NOT(found == &value, "value '", value.name(),
                     "' is not the graph's value of that name (erased or renamed)");
    return Status::Ok();
  }

  // Names a use that is no edge's, which there is when the values counted hold more uses than
  // the live nodes have edges.
  Status FindStrayUse(const ChunkCounts& total) {
    for (const std::vector<Value*>& sources : {graph_.inputs(), graph_.initializers()}) {
      for (const Value* source : sources) ZG_RETURN_IF_ERROR(CheckUsers(*source));
    }
    for (const Value* source : sparse_sources_) ZG_RETURN_IF_ERROR(CheckUsers(*source));
    for (const Node* node : graph_.stored_nodes()) {
      for (const Value* output : node->outputs()) {
        if (output != nullptr) ZG_RETURN_IF_ERROR(CheckUsers(*output));
      }
    }
    return InternalError(StrCat("the graph's values list ", total.uses,
                                " uses, but its nodes read ", total.edges, " inputs"));
  }

  // Whether `value`'s producer is in the graph and lists it as its output.
  static bool IsDefinedByItsProducer(const Value& value) {
    const Node* producer = value.producer();
    const auto index = static_cast<size_t>(value.producer_output_index());
    return !producer->erased() && index < producer->num_outputs() &&
           producer->output(index) == &value;
  }

  // The node's links agree with its neighbours', which are in the graph, and the order key grows
  // to the next node; a node without a neighbour is the schedule's end.
  Status CheckLinks(const Node& node) const {
    if (const Node* next = node.next(); next == nullptr) {
      ZG_RETURN_IF_NOT(&node == graph_.last_node(), Label(node),
                       " ends the schedule, but is not its last node");
    } else {
      ZG_RETURN_IF_NOT(!next->erased() && next->prev() == &node, Label(node),
                       ": schedule links are inconsistent");
      ZG_RETURN_IF_NOT(node.IsBefore(*next), Label(*next),
                       ": order key is not after its predecessor's");
    }
    if (const Node* prev = node.prev(); prev == nullptr) {
      ZG_RETURN_IF_NOT(&node == graph_.first_node(), Label(node),
                       " starts the schedule, but is not its first node");
    } else {
      ZG_RETURN_IF_NOT(!prev->erased() && prev->next() == &node, Label(node),
                       ": schedule links are inconsistent");
    }
    return Status::Ok();
  }

  // Every name is looked up to check that the graph's name index agrees with the nodes. The
  // lookups are done in bulk (a chunk of nodes at a time), which overlaps their cache misses: one
  // at a time, they are most of the time Verify takes on a large graph. Each starts from the hash
  // the item was filed under (Graph::FindAsFiled), which the index keeps as it keeps the names.
  Status CheckNodes(size_t c) {
    const StoredNodeRange chunk = graph_.stored_nodes(c, chunks_);
    ChunkCounts& counts = counts_[c];
    std::vector<const Node*> named_nodes;
    std::vector<const Value*> outputs;
    for (const Node* node : chunk) {
      ++counts.nodes;
      if (!node->name().empty()) named_nodes.push_back(node);
      for (const Value* output : node->outputs()) {
        if (output != nullptr) outputs.push_back(output);
      }
    }
    const std::vector<Node*> found_nodes = graph_.FindAsFiled(named_nodes);
    const std::vector<Value*> found_outputs = graph_.FindAsFiled(outputs);
    GraphContracts contracts(graph_);
    size_t next_named = 0;   // in found_nodes
    size_t next_output = 0;  // in found_outputs
    for (const Node* node : chunk) {
      ZG_RETURN_IF_ERROR(CheckLinks(*node));
      if (!node->name().empty()) {
        ZG_RETURN_IF_NOT(found_nodes[next_named++] == node, Label(*node),
                         ": another node has the same name");
      }
      for (size_t i = 0; i < node->num_inputs(); ++i) {
        const Value* input = node->input(i);
        if (input == nullptr) continue;
        ++counts.edges;
        if (input->producer() != nullptr) {
          ZG_RETURN_IF_NOT(IsDefinedByItsProducer(*input) && input->producer()->IsBefore(*node),
                           Label(*node), " reads '", input->name(), "' before ",
                           Label(*input->producer()), " defines it (not in topological order)");
        } else if (!sources_[static_cast<size_t>(input->id())]) {
          // A source that is neither a graph input nor an initializer: a sparse initializer.
          ZG_RETURN_IF_ERROR(AddSparseSource(*input));
        }
        const std::span<const Use> users = input->users();
        const uint32_t use = node->input_use_index(i);
        ZG_RETURN_IF_NOT(use < users.size() && users[use].node == node &&
                             users[use].input_index == static_cast<int>(i),
                         Label(*node), " input ", i, " reads '", input->name(),
                         "', which does not list it as a user");
      }
      for (size_t i = 0; i < node->num_outputs(); ++i) {
        const Value* output = node->output(i);
        if (output == nullptr) continue;
        ZG_RETURN_IF_NOT(
            output->producer() == node && output->producer_output_index() == static_cast<int>(i),
            Label(*node), ": output ", i, " '", output->name(), "' names another producer");
        ZG_RETURN_IF_NOT(found_outputs[next_output++] == output, Label(*node), ": output '",
                         output->name(), "' is defined more than once");
        if (!sources_[static_cast<size_t>(output->id())]) counts.uses += output->users().size();
      }
      ZG_RETURN_IF_ERROR(CheckContract(contracts, *node));
    }
    return Status::Ok();
  }

  Status AddSparseSource(const Value& value) {
    std::lock_guard<std::mutex> lock(sparse_mutex_);
    if (std::find(sparse_sources_.begin(), sparse_sources_.end(), &value) !=
        sparse_sources_.end()) {
      return Status::Ok();
    }
    ZG_RETURN_IF_ERROR(CheckSource(value, graph_.FindValue(value.name())));
    sparse_sources_.push_back(&value);
    source_uses_ += value.users().size();
    return Status::Ok();
  }

  const Graph& graph_;
  std::vector<char> sources_;  // by value id: graph inputs and initializers
  const size_t chunks_;
  std::vector<ChunkCounts> counts_;  // of each chunk's live nodes
  std::mutex sparse_mutex_;
  std::vector<const Value*> sparse_sources_;  // a handful at most
  size_t source_uses_ = 0;                    // of the graph inputs and initializers counted
};

}  // namespace

Status Verify(const Graph& graph) { return Verifier(graph).Run(); }

Status VerifyContracts(std::span<const Node* const> nodes) {
  for (const Node* node : nodes) {
    const OpContract* contract = node->contract();
    if (contract == nullptr) continue;
    ZG_RETURN_IF_ERROR(CheckNodeAgainstContract(*node, *contract, AttributeCheck::kRequired));
    node->MarkContractChecked();
  }
  return Status::Ok();
}

}  // namespace zerograph
