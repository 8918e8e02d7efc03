#ifndef ZEROGRAPH_SRC_PASSES_COLLECTIVE_H_
#define ZEROGRAPH_SRC_PASSES_COLLECTIVE_H_

#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"

namespace zerograph {

// A collective of our own domain: every rank must run them all in one order, on one stream.
inline bool IsCollective(const Node& node) {
  return node.domain() == kZerographDomain &&
         (node.op_type() == "ReduceScatter" || node.op_type() == "AllGather" ||
          node.op_type() == "AllReduce");
}

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_PASSES_COLLECTIVE_H_
