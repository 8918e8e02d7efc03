#include "zerograph/ir/verify.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph {
namespace {

// Nodes checked per round of bulk name lookups (see Verify).
constexpr size_t kVerifyChunk = 1024;

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

}  // namespace

Status Verify(const Graph& graph) {
  GraphContracts contracts(graph);
  std::vector<char> defined(static_cast<size_t>(graph.value_id_bound()), 0);
  // Input edges per value: CheckUsers shows every listed use is an edge; equal counts then show
  // every edge is listed (a linear check; searching the use list per edge is quadratic for values
  // such as the learning rate that thousands of nodes read).
  std::vector<int64_t> edges(static_cast<size_t>(graph.value_id_bound()), 0);
  std::vector<const Value*> defined_values;
  auto define = [&](const Value* value) -> Status {
    defined[static_cast<size_t>(value->id())] = 1;
    defined_values.push_back(value);
    return CheckUsers(*value);
  };
  // `found` is graph.FindValue(value->name()).
  auto define_source = [&](const Value* value, const Value* found) -> Status {
    ZG_RETURN_IF_NOT(found == value, "value '", value->name(),
                     "' is not the graph's value of that name (erased or renamed)");
    return define(value);
  };
  // Every name is looked up to check that the graph's name index agrees with the nodes. The
  // lookups are done in bulk (a chunk of nodes at a time, FindValues / FindNodes), which overlaps
  // their cache misses: one at a time, they are most of the time Verify takes on a large graph.
  auto names_of = [](std::span<const Value* const> values) {
    std::vector<std::string_view> names;
    names.reserve(values.size());
    for (const Value* value : values) names.push_back(value->name());
    return names;
  };
  for (const std::vector<Value*>& sources : {graph.inputs(), graph.initializers()}) {
    const std::vector<Value*> found = graph.FindValues(names_of(sources));
    for (size_t i = 0; i < sources.size(); ++i) {
      ZG_RETURN_IF_ERROR(define_source(sources[i], found[i]));
    }
  }

  size_t count = 0;
  const Node* previous = nullptr;
  std::vector<const Node*> chunk;
  std::vector<std::string_view> node_names, output_names;
  auto check_chunk = [&]() -> Status {
    node_names.clear();
    output_names.clear();
    for (const Node* node : chunk) {
      node_names.push_back(node->name());
      for (const Value* output : node->outputs()) {
        if (output != nullptr) output_names.push_back(output->name());
      }
    }
    const std::vector<Node*> found_nodes = graph.FindNodes(node_names);
    const std::vector<Value*> found_outputs = graph.FindValues(output_names);
    size_t next_output = 0;  // in found_outputs
    for (size_t k = 0; k < chunk.size(); ++k) {
      const Node* node = chunk[k];
      ++count;
      ZG_RETURN_IF_NOT(node->prev() == previous, Label(*node), ": schedule links are inconsistent");
      ZG_RETURN_IF_NOT(previous == nullptr || previous->IsBefore(*node), Label(*node),
                       ": order key is not after its predecessor's");
      previous = node;
      if (!node->name().empty()) {
        ZG_RETURN_IF_NOT(found_nodes[k] == node, Label(*node), ": another node has the same name");
      }
      for (size_t i = 0; i < node->num_inputs(); ++i) {
        const Value* input = node->input(i);
        if (input == nullptr) continue;
        if (!defined[static_cast<size_t>(input->id())]) {
          if (input->producer() == nullptr) {
            // A source that is neither a graph input nor an initializer: a sparse initializer.
            ZG_RETURN_IF_ERROR(define_source(input, graph.FindValue(input->name())));
          } else {
            return InvalidArgumentError(StrCat(Label(*node), " reads '", input->name(), "' before ",
                                               Label(*input->producer()),
                                               " defines it (not in topological order)"));
          }
        }
        ++edges[static_cast<size_t>(input->id())];
      }
      for (size_t i = 0; i < node->num_outputs(); ++i) {
        const Value* output = node->output(i);
        if (output == nullptr) continue;
        ZG_RETURN_IF_NOT(
            output->producer() == node && output->producer_output_index() == static_cast<int>(i),
            Label(*node), ": output ", i, " '", output->name(), "' names another producer");
        ZG_RETURN_IF_NOT(found_outputs[next_output++] == output, Label(*node), ": output '",
                         output->name(), "' is defined more than once");
        ZG_RETURN_IF_ERROR(define(output));
      }
      if (const OpContract* contract = contracts.Find(*node)) {
        ZG_RETURN_IF_ERROR(CheckNodeAgainstContract(*node, *contract, AttributeCheck::kRequired));
      }
    }
    chunk.clear();
    return Status::Ok();
  };
  for (const Node* node : graph.nodes()) {
    chunk.push_back(node);
    if (chunk.size() == kVerifyChunk) ZG_RETURN_IF_ERROR(check_chunk());
  }
  ZG_RETURN_IF_ERROR(check_chunk());
  ZG_RETURN_IF_NOT(previous == graph.last_node(), "the schedule's last node is inconsistent");
  ZG_RETURN_IF_NOT(count == graph.num_nodes(), "the schedule holds ", count,
                   " nodes, but the graph counts ", graph.num_nodes());
  for (const Value* value : defined_values) {
    ZG_RETURN_IF_NOT(
        static_cast<size_t>(edges[static_cast<size_t>(value->id())]) == value->users().size(),
        "value '", value->name(), "' lists ", value->users().size(), " uses, but nodes read it ",
        edges[static_cast<size_t>(value->id())], " times");
  }
  const std::vector<Value*> found_outputs = graph.FindValues(names_of(graph.outputs()));
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Value* output = graph.outputs()[i];
    ZG_RETURN_IF_NOT(defined[static_cast<size_t>(output->id())] || output->producer() == nullptr,
                     "graph output '", output->name(), "' is not defined");
    ZG_RETURN_IF_NOT(found_outputs[i] == output, "graph output '", output->name(),
                     "' refers to an erased value");
  }
  return Status::Ok();
}

}  // namespace zerograph
