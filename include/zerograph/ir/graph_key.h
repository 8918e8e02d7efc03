#ifndef ZEROGRAPH_IR_GRAPH_KEY_H_
#define ZEROGRAPH_IR_GRAPH_KEY_H_

namespace zerograph {

class Graph;

// A pass key: only Graph can make one, so only Graph constructs nodes, values and tensors (which
// its pools construct in place).
class GraphKey {
 private:
  friend class Graph;
  GraphKey() = default;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_GRAPH_KEY_H_
