#ifndef ZEROGRAPH_IR_PROTO_STORE_H_
#define ZEROGRAPH_IR_PROTO_STORE_H_

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

namespace zerograph {

// For readers and writers of the graph's file format (the onnx module) and the IR itself: the
// storage that Graph::FromModelProto takes. Code that edits graphs uses graph.h, not this.
//
// The parsed ONNX messages behind a Graph, all in one arena: the loader parses into `model`, the
// graph then takes the repeated fields it models (nodes, initializers, inputs, outputs, value_info)
// out of it and puts them back, in schedule order, when the model is written.
class ProtoStore {
 public:
  ProtoStore()
      : arena(LargeBlocks()),
        model(google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena)) {}
  ProtoStore(const ProtoStore&) = delete;
  ProtoStore& operator=(const ProtoStore&) = delete;

  template <typename Message>
  Message* New() {
    return google::protobuf::Arena::CreateMessage<Message>(&arena);
  }

  google::protobuf::Arena arena;
  onnx::ModelProto* model;

 private:
  // The arena's default blocks grow to 8 KiB only: a large model then takes ~10^5 blocks, and
  // parsing, serializing and freeing it were each 1.5-2x slower than with blocks growing from
  // 64 KiB to 8 MiB (measured on a 330 MB, 1M-node graph: parse 0.5 s instead of 0.65-1.6 s,
  // serialize 0.4 s instead of 0.7-1.5 s). A small model still takes one 64 KiB block.
  static google::protobuf::ArenaOptions LargeBlocks() {
    google::protobuf::ArenaOptions options;
    options.start_block_size = size_t{64} << 10;
    options.max_block_size = size_t{8} << 20;
    return options;
  }
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_PROTO_STORE_H_
