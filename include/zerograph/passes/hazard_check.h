#ifndef ZEROGRAPH_PASSES_HAZARD_CHECK_H_
#define ZEROGRAPH_PASSES_HAZARD_CHECK_H_

#include "zerograph/core/status.h"

namespace zerograph {

class Graph;

// Checks that a rewritten graph is safe to run on two streams, beyond what Verify checks:
//  - every collective runs on one stream, so all ranks issue them in the same order, and carries
//    the graph's `nranks`;
//  - each bucket's AllGather waits (through its Nop) for the bucket's last optimizer update;
//  - nothing reads a bucket's parameters after that update, so the in-place gather cannot
//    overwrite a parameter that compute still reads;
//  - no reader of a bucket's gradients other than its CoalesceTensors runs on the communication
//    stream;
//  - when the gather runs on another stream than compute, the parameter views read at the start of
//    the next step wait for it (`__after_previous_step`).
// A failure is InvalidArgument naming the nodes involved. A graph without collectives passes.
Status CheckHazards(const Graph& graph);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_HAZARD_CHECK_H_
