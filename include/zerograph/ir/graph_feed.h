#ifndef ZEROGRAPH_IR_GRAPH_FEED_H_
#define ZEROGRAPH_IR_GRAPH_FEED_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"

namespace onnx {
class NodeProto;
}  // namespace onnx

namespace zerograph {

// The names of a run of nodes: per node its name and how many inputs and outputs it has, whose
// names ("" for an omitted one) lie end to end in `values`, a node's inputs before its outputs.
struct NodeNameList {
  struct Entry {
    std::string_view name;
    uint32_t num_inputs = 0;
    uint32_t num_outputs = 0;
  };
  std::vector<Entry> nodes;
  std::vector<std::string_view> values;

  void clear() {
    nodes.clear();
    values.clear();
  }
};

// Appends the names `messages` hold to `names`.
void AppendNamesOf(std::span<onnx::NodeProto* const> messages, NodeNameList& names);

// For loaders (the onnx module's parser implements it; Graph::FromModelProto reads it). Code
// that edits graphs uses graph.h, not this.
//
// The main graph's messages, handed over while a parser is still making them: the graph links the
// first nodes while other threads parse the later ones, so that loading a large model costs about
// the longer of parsing and linking, not their sum.
class GraphFeed {
 public:
  virtual ~GraphFeed() = default;

  // How many nodes the graph has.
  virtual size_t num_nodes() const = 0;
  // Waits until the graph's initializers and inputs are parsed and in the store's graph.
  virtual Status AwaitSources() = 0;
  // Waits until nodes [0, count) are parsed and returns their messages (the span may hold more),
  // or the error that stopped the parser. A message may lack the node's name, inputs and outputs:
  // the graph holds those itself, and reads them with ReadNames.
  virtual StatusOr<std::span<onnx::NodeProto* const>> AwaitNodes(size_t count) = 0;
  // Appends the names of awaited nodes [begin, end) to `names`: views into the model's bytes or
  // its messages, valid while the feed lives and the messages are not changed.
  virtual void ReadNames(size_t begin, size_t end, NodeNameList& names) const = 0;
  // Waits until the whole model is parsed: the graph's value_info and outputs are then in the
  // store's graph.
  virtual Status AwaitRest() = 0;
  // Stops the parser and waits for its threads: they write into the store's arena, which must
  // not go before them. Safe to call more than once.
  virtual void Stop() = 0;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_GRAPH_FEED_H_
