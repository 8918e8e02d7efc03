#ifndef ZEROGRAPH_SRC_IR_NODE_PROTO_CHECK_H_
#define ZEROGRAPH_SRC_IR_NODE_PROTO_CHECK_H_

#include "zerograph/core/status.h"

namespace onnx {
class NodeProto;
}  // namespace onnx

namespace zerograph {

// The node-level rules of ONNX's checker that matter for a rewrite (docs/cli.md, "What a graph
// must be") that its message holds, without the names the graph holds (a node needs an input or
// an output: the graph checks that): an op type; each attribute named once, with a known type, at
// most one value field and that of its type, and a value rather than a reference to a function's
// attribute. The error does not name the node: the caller adds that context only on failure, as
// building a label per node costs more than the checks on a large graph.
Status CheckNodeProto(const onnx::NodeProto& node);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_IR_NODE_PROTO_CHECK_H_
