#ifndef ZEROGRAPH_IR_VERIFY_H_
#define ZEROGRAPH_IR_VERIFY_H_

#include <span>

#include "zerograph/core/status.h"

namespace zerograph {

class Graph;
class Node;

// Checks the invariants every pass must keep: SSA (each value defined once, its producer and users
// consistent with the nodes' edges), topological order (every input defined before it is read),
// graph outputs defined, unique value and node names, and the input/output counts and attribute
// types of our own `org.zerograph` ops. Returns the first violation in the order the nodes were
// made, naming the node and value. A node that passed the contract check and has not changed
// since (Node::contract_checked) is not checked against its contract again.
Status Verify(const Graph& graph);

// Checks each node against the contract its graph picked for its op (Node::contract: input and
// output counts, omitted inputs, required attributes and their types), the part of Verify that a
// graph just loaded can fail: loading builds the graph's edges, names and order itself and
// refuses a file that breaks them. Each node is checked by itself, so a loader checks them as
// they are linked (LinkFollower). Returns the first violation in the order given; the nodes
// checked before it are marked checked (Node::MarkContractChecked).
Status VerifyContracts(std::span<const Node* const> nodes);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_VERIFY_H_
