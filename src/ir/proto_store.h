#ifndef ZEROGRAPH_SRC_IR_PROTO_STORE_H_
#define ZEROGRAPH_SRC_IR_PROTO_STORE_H_

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

namespace zerograph {

// The parsed ONNX messages behind a Graph, all in one arena: the loader parses into `model`, the
// graph then takes the repeated fields it models (nodes, initializers, inputs, outputs, value_info)
// out of it and puts them back, in schedule order, when the model is written.
class ProtoStore {
 public:
  ProtoStore() : model(google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena)) {}
  ProtoStore(const ProtoStore&) = delete;
  ProtoStore& operator=(const ProtoStore&) = delete;

  template <typename Message>
  Message* New() {
    return google::protobuf::Arena::CreateMessage<Message>(&arena);
  }

  google::protobuf::Arena arena;
  onnx::ModelProto* model;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_IR_PROTO_STORE_H_
