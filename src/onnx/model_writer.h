#ifndef ZEROGRAPH_SRC_ONNX_MODEL_WRITER_H_
#define ZEROGRAPH_SRC_ONNX_MODEL_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace zerograph {

// Receives a serialized model piece by piece: `bytes` go at `offset`. Called from several threads
// at once, for ranges that do not overlap.
using PositionalSink = std::function<Status(uint64_t offset, std::span<const std::byte> bytes)>;

// Serializes `model` into `sink`: the bytes protobuf's serializer gives, with the main graph's
// nodes, initializers and value lists serialized on up to `threads` threads.
//
// Why: serializing is most of saving a large graph, and protobuf serializes one message on one
// thread. Those repeated fields are independent messages, each written as its tag, its length and
// its bytes, so threads size them (in parallel), lay them out between the model's and the graph's
// other fields in field-number order, as protobuf orders them, then serialize and hand over a
// chunk of them at a time at its offset: no thread waits for another's bytes, and no copy of the
// whole model is held: a message of a megabyte or more goes to the sink with its large bytes
// fields as they lie in it, uncopied. A model or graph with unknown fields (which protobuf writes
// last) is serialized plainly. `held_fields`, when given, adds the fields a graph holds for the
// model's nodes and fused initializers as if their messages held them (Graph::HeldFields), the
// fused raw data made a megabyte at a time. `model` is changed during the call only.
Status SerializeModel(onnx::ModelProto& model, int threads, const PositionalSink& sink,
                      const Graph::HeldFields* held_fields = nullptr);

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_ONNX_MODEL_WRITER_H_
