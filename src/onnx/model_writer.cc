#include "onnx/model_writer.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "onnx/wire_format.h"

namespace zerograph {
namespace {

using google::protobuf::MessageLite;
using NodeAppendix = std::function<std::span<const std::byte>(size_t node)>;
using google::protobuf::RepeatedPtrField;

// Takes a repeated field's messages out for the object's life, then puts them back in order.
template <typename T>
class TakenOut {
 public:
  explicit TakenOut(RepeatedPtrField<T>* field)
      : field_(field), messages_(static_cast<size_t>(field->size())) {
    field_->UnsafeArenaExtractSubrange(0, field_->size(), messages_.data());
  }
  ~TakenOut() {
    for (T* message : messages_) field_->UnsafeArenaAddAllocated(message);
  }
  TakenOut(const TakenOut&) = delete;
  TakenOut& operator=(const TakenOut&) = delete;

  const std::vector<T*>& messages() const { return messages_; }

 private:
  RepeatedPtrField<T>* field_;
  std::vector<T*> messages_;
};

// Takes the model's graph out for the object's life.
class GraphTakenOut {
 public:
  explicit GraphTakenOut(onnx::ModelProto& model)
      : model_(model), graph_(model.unsafe_arena_release_graph()) {}
  ~GraphTakenOut() { model_.unsafe_arena_set_allocated_graph(graph_); }
  GraphTakenOut(const GraphTakenOut&) = delete;
  GraphTakenOut& operator=(const GraphTakenOut&) = delete;

 private:
  onnx::ModelProto& model_;
  onnx::GraphProto* graph_;
};

// One message of the graph's repeated fields, to be written as field `field`.
struct Item {
  uint32_t field;
  const MessageLite* message;
};

// Items serialized at most kChunkItems at a time, each chunk into a buffer of its own. A chunk
// holds items of one field, so that the graph's own fields can go between chunks.
constexpr size_t kChunkItems = 256;

struct Chunk {
  size_t begin, end;  // in the items
  uint64_t size = 0;  // serialized
  uint64_t offset = 0;
};

std::vector<Chunk> ChunksOf(const std::vector<Item>& items) {
  std::vector<Chunk> chunks;
  for (size_t begin = 0; begin < items.size();) {
    size_t end = begin + 1;
    while (end < items.size() && end - begin < kChunkItems &&
           items[end].field == items[begin].field) {
      ++end;
    }
    chunks.push_back({begin, end});
    begin = end;
  }
  return chunks;
}

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  for (; value >= 0x80; value >>= 7) ++size;
  return size;
}

// The fields `appendix` adds to item `i`, a node when `i` < `nodes`.
std::span<const std::byte> AppendixOf(const NodeAppendix& appendix, size_t nodes, size_t i) {
  if (appendix == nullptr || i >= nodes) return {};
  return appendix(i);
}

// Sizes `chunk`, caching every message's size for the serializer. The first `nodes` items are the
// model's nodes.
void SizeChunk(const std::vector<Item>& items, size_t nodes, const NodeAppendix& appendix,
               Chunk& chunk) {
  chunk.size = 0;
  for (size_t i = chunk.begin; i < chunk.end; ++i) {
    const size_t size = items[i].message->ByteSizeLong() + AppendixOf(appendix, nodes, i).size();
    chunk.size += VarintSize(LengthDelimitedTag(items[i].field)) + VarintSize(size) + size;
  }
}

// Where `appendix` goes in a serialized node: after its attributes, before its later fields, as
// protobuf would write the fields if the message held them.
size_t AppendixOffset(const uint8_t* node, size_t size) {
  WireScanner scan(node, node + size);
  while (std::optional<WireField> field = scan.Next()) {
    if (field->number > kNodeAttribute) return static_cast<size_t>(field->begin - node);
  }
  return size;
}

// Serializes a sized chunk as protobuf writes repeated messages: per item its tag, its length
// and its bytes, a node's with its appendix.
std::string SerializeChunk(const std::vector<Item>& items, size_t nodes,
                           const NodeAppendix& appendix, const Chunk& chunk) {
  std::string out;
  out.reserve(chunk.size);
  for (size_t i = chunk.begin; i < chunk.end; ++i) {
    const size_t size = static_cast<size_t>(items[i].message->GetCachedSize());
    const std::span<const std::byte> extra = AppendixOf(appendix, nodes, i);
    AppendVarint(out, LengthDelimitedTag(items[i].field));
    AppendVarint(out, size + extra.size());
    const size_t at = out.size();
    out.resize(at + size);
    auto* bytes = reinterpret_cast<uint8_t*>(out.data() + at);
    items[i].message->SerializeWithCachedSizesToArray(bytes);
    if (!extra.empty()) {
      out.insert(at + AppendixOffset(bytes, size), reinterpret_cast<const char*>(extra.data()),
                 extra.size());
    }
  }
  return out;
}

std::span<const std::byte> AsBytes(const std::string& bytes) {
  return std::as_bytes(std::span(bytes.data(), bytes.size()));
}

// A message's serialized fields with a block of other bytes put among them by field number: the
// fields numbered below `number` come before the block.
class FieldSplicer {
 public:
  explicit FieldSplicer(const std::string& fields)
      : emitted_(reinterpret_cast<const uint8_t*>(fields.data())),
        end_(reinterpret_cast<const uint8_t*>(fields.data() + fields.size())) {}

  // The fields numbered below `number` not given yet. (The field that stops the scan is read
  // again by the next call: one field per block.)
  std::span<const std::byte> Before(uint32_t number) {
    const uint8_t* begin = emitted_;
    WireScanner scan(emitted_, end_);
    while (std::optional<WireField> field = scan.Next()) {
      if (field->number >= number) break;
      emitted_ = field->end;
    }
    return std::as_bytes(std::span(begin, emitted_));
  }
  // Every field not given yet.
  std::span<const std::byte> Rest() {
    const uint8_t* begin = emitted_;
    emitted_ = end_;
    return std::as_bytes(std::span(begin, end_));
  }

 private:
  const uint8_t* emitted_;
  const uint8_t* end_;
};

Status SerializePlainly(const onnx::ModelProto& model, const PositionalSink& sink,
                        const NodeAppendix& appendix) {
  std::string bytes;
  if (appendix == nullptr) {
    ZG_RETURN_IF_NOT(model.SerializeToString(&bytes), "cannot serialize the model");
    return sink(0, AsBytes(bytes));
  }
  // Rare (unknown fields), so the appendix goes into a copy rather than beside the serializer.
  onnx::ModelProto copy = model;
  for (int i = 0; i < copy.graph().node_size(); ++i) {
    const std::span<const std::byte> extra = appendix(static_cast<size_t>(i));
    ZG_RETURN_IF_NOT(copy.mutable_graph()->mutable_node(i)->MergeFromString(
                         std::string(reinterpret_cast<const char*>(extra.data()), extra.size())),
                     "cannot add the IR's fields to node ", i);
  }
  ZG_RETURN_IF_NOT(copy.SerializeToString(&bytes), "cannot serialize the model");
  return sink(0, AsBytes(bytes));
}

}  // namespace

Status SerializeModel(onnx::ModelProto& model, int threads, const PositionalSink& sink,
                      const NodeAppendix& appendix) {
  if (!model.has_graph() || !model.unknown_fields().empty() ||
      !model.graph().unknown_fields().empty()) {
    return SerializePlainly(model, sink, appendix);
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  TakenOut nodes(graph.mutable_node());
  TakenOut initializers(graph.mutable_initializer());
  TakenOut inputs(graph.mutable_input());
  TakenOut outputs(graph.mutable_output());
  TakenOut value_infos(graph.mutable_value_info());

  // In field-number order, as protobuf writes them.
  std::vector<Item> items;
  items.reserve(nodes.messages().size() + initializers.messages().size() +
                inputs.messages().size() + outputs.messages().size() +
                value_infos.messages().size());
  auto add = [&items](uint32_t field, const auto& messages) {
    for (const MessageLite* message : messages) items.push_back({field, message});
  };
  add(kGraphNode, nodes.messages());
  add(kGraphInitializer, initializers.messages());
  add(kGraphInput, inputs.messages());
  add(kGraphOutput, outputs.messages());
  add(kGraphValueInfo, value_infos.messages());
  std::vector<Chunk> chunks = ChunksOf(items);
  ZG_RETURN_IF_ERROR(ParallelFor(chunks.size(), threads, [&](size_t c) {
    SizeChunk(items, nodes.messages().size(), appendix, chunks[c]);
    return Status::Ok();
  }));

  const std::string graph_fields = graph.SerializeAsString();
  std::string model_fields;
  {
    GraphTakenOut without_graph(model);
    model_fields = model.SerializeAsString();
  }
  uint64_t graph_size = graph_fields.size();
  for (const Chunk& chunk : chunks) graph_size += chunk.size;
  std::string graph_header;
  AppendVarint(graph_header, LengthDelimitedTag(kModelGraph));
  AppendVarint(graph_header, graph_size);
  const uint64_t model_size = model_fields.size() + graph_header.size() + graph_size;
  ZG_RETURN_IF_NOT(model_size <= INT_MAX, "the model would be ", model_size,
                   " bytes, over protobuf's 2 GiB limit; keep large initializers in external data");

  // The layout: the model's fields before the graph, the graph's header, its own fields and the
  // chunks by field number, the model's fields after the graph. The small pieces are written as
  // they are laid out, the chunks after.
  uint64_t offset = 0;
  auto put = [&](std::span<const std::byte> bytes) -> Status {
    if (!bytes.empty()) ZG_RETURN_IF_ERROR(sink(offset, bytes));
    offset += bytes.size();
    return Status::Ok();
  };
  FieldSplicer model_splicer(model_fields);
  ZG_RETURN_IF_ERROR(put(model_splicer.Before(kModelGraph)));
  ZG_RETURN_IF_ERROR(put(AsBytes(graph_header)));
  FieldSplicer graph_splicer(graph_fields);
  for (Chunk& chunk : chunks) {
    ZG_RETURN_IF_ERROR(put(graph_splicer.Before(items[chunk.begin].field)));
    chunk.offset = offset;
    offset += chunk.size;
  }
  ZG_RETURN_IF_ERROR(put(graph_splicer.Rest()));
  ZG_RETURN_IF_ERROR(put(model_splicer.Rest()));
  return ParallelFor(chunks.size(), threads, [&](size_t c) {
    const std::string bytes = SerializeChunk(items, nodes.messages().size(), appendix, chunks[c]);
    return sink(chunks[c].offset, AsBytes(bytes));
  });
}

}  // namespace zerograph
