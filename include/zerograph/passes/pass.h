#ifndef ZEROGRAPH_PASSES_PASS_H_
#define ZEROGRAPH_PASSES_PASS_H_

#include <string>
#include <string_view>

#include "zerograph/core/status.h"

namespace zerograph {

class Graph;

// A graph-to-graph rewrite. `Run` is the one entry point (the pipeline times and verifies around
// it); subclasses implement `RunImpl`. A pass keeps its own statistics for `--report`.
class GraphPass {
 public:
  virtual ~GraphPass() = default;

  // Short kebab-case name: "sharding-stage1", "overlap".
  virtual std::string_view name() const = 0;

  // Returns whether the pass changed the graph.
  StatusOr<bool> Run(Graph& graph);

  // What the last run did, one fact per line ("" when there is nothing to say).
  virtual std::string StatsString() const { return {}; }

 protected:
  virtual StatusOr<bool> RunImpl(Graph& graph) = 0;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_PASS_H_
