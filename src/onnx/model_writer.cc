#include "onnx/model_writer.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>
#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "onnx/wire_format.h"

namespace zerograph {
namespace {

using google::protobuf::MessageLite;
using HeldFields = Graph::HeldFields;

// Moves the graph's repeated fields of messages aside for the object's life, so that serializing
// the graph writes only its other fields, then back: swaps of the fields' arrays, with a graph on
// the same arena (an empty message, left to the arena when there is one).
class RepeatedFieldsAside {
 public:
  explicit RepeatedFieldsAside(onnx::GraphProto& graph)
      : graph_(graph),
        aside_(google::protobuf::Arena::CreateMessage<onnx::GraphProto>(graph.GetArena())) {
    Swap();
  }
  ~RepeatedFieldsAside() {
    Swap();
    if (graph_.GetArena() == nullptr) delete aside_;
  }
  RepeatedFieldsAside(const RepeatedFieldsAside&) = delete;
  RepeatedFieldsAside& operator=(const RepeatedFieldsAside&) = delete;

  const onnx::GraphProto& fields() const { return *aside_; }

 private:
  void Swap() {
    aside_->mutable_node()->Swap(graph_.mutable_node());
    aside_->mutable_initializer()->Swap(graph_.mutable_initializer());
    aside_->mutable_input()->Swap(graph_.mutable_input());
    aside_->mutable_output()->Swap(graph_.mutable_output());
    aside_->mutable_value_info()->Swap(graph_.mutable_value_info());
  }

  onnx::GraphProto& graph_;
  onnx::GraphProto* aside_;
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

// The split fields, in field-number order, as protobuf writes them.
constexpr uint32_t kSplitFields[] = {kGraphNode, kGraphInitializer, kGraphInput, kGraphOutput,
                                     kGraphValueInfo};

size_t CountOf(const onnx::GraphProto& fields, uint32_t field) {
  switch (field) {
    case kGraphNode:
      return static_cast<size_t>(fields.node_size());
    case kGraphInitializer:
      return static_cast<size_t>(fields.initializer_size());
    case kGraphInput:
      return static_cast<size_t>(fields.input_size());
    case kGraphOutput:
      return static_cast<size_t>(fields.output_size());
    default:
      return static_cast<size_t>(fields.value_info_size());
  }
}

const MessageLite& MessageAt(const onnx::GraphProto& fields, uint32_t field, size_t i) {
  const int index = static_cast<int>(i);
  switch (field) {
    case kGraphNode:
      return fields.node(index);
    case kGraphInitializer:
      return fields.initializer(index);
    case kGraphInput:
      return fields.input(index);
    case kGraphOutput:
      return fields.output(index);
    default:
      return fields.value_info(index);
  }
}

// Messages of one split field serialized at most kChunkItems at a time, each chunk into a buffer
// of its own, so that the graph's own fields can go between chunks.
constexpr size_t kChunkItems = 256;

struct Chunk {
  uint32_t field;
  size_t begin, end;  // in the field
  uint64_t size = 0;  // serialized
  uint64_t offset = 0;
};

std::vector<Chunk> ChunksOf(const onnx::GraphProto& fields) {
  std::vector<Chunk> chunks;
  for (const uint32_t field : kSplitFields) {
    const size_t count = CountOf(fields, field);
    for (size_t begin = 0; begin < count; begin += kChunkItems) {
      chunks.push_back({field, begin, std::min(count, begin + kChunkItems)});
    }
  }
  return chunks;
}

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  for (; value >= 0x80; value >>= 7) ++size;
  return size;
}

// Initializer `i`'s raw data when the graph makes it, else null.
const FusedBytes* FusedAt(const HeldFields* held_fields, const Chunk& chunk, size_t i) {
  if (held_fields == nullptr || chunk.field != kGraphInitializer) return nullptr;
  return held_fields->FusedInitializer(i);
}

// The size of a raw data field of `size` bytes.
size_t RawDataFieldSize(size_t size) {
  return VarintSize(LengthDelimitedTag(kTensorRawData)) + VarintSize(size) + size;
}

// Sizes `chunk`, caching every message's size for the serializer.
void SizeChunk(const onnx::GraphProto& fields, const HeldFields* held_fields, Chunk& chunk) {
  chunk.size = 0;
  const size_t tag_size = VarintSize(LengthDelimitedTag(chunk.field));
  const bool nodes = held_fields != nullptr && chunk.field == kGraphNode;
  for (size_t i = chunk.begin; i < chunk.end; ++i) {
    size_t size = MessageAt(fields, chunk.field, i).ByteSizeLong();
    if (nodes) size += held_fields->LeadSize(i) + held_fields->Appendix(i).size();
    if (const FusedBytes* fused = FusedAt(held_fields, chunk, i)) {
      size += RawDataFieldSize(fused->size());
    }
    chunk.size += tag_size + VarintSize(size) + size;
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

// Messages at least this large (a large tensor held in the model) are serialized straight
// into the sink rather than copied into a chunk's buffer first; a chunk's buffer is handed over
// once it holds this much.
constexpr size_t kStreamedMessageBytes = size_t{1} << 20;
// The buffer for the fields around such a message's large bytes.
constexpr size_t kStreamBufferBytes = size_t{64} << 10;
// The buffer a fused initializer's raw data is made in, a part at a time.
constexpr size_t kFusedBufferBytes = size_t{1} << 20;

// Hands what protobuf serializes into it to the sink at consecutive offsets: small fields through
// a buffer, large bytes fields (a tensor's raw_data) from where they lie in the message.
class SinkStream final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  SinkStream(const PositionalSink& sink, uint64_t offset)
      : sink_(sink), offset_(offset), buffer_(kStreamBufferBytes) {}

  bool Next(void** data, int* size) override {
    if (!Flush()) return false;
    *data = buffer_.data();
    *size = static_cast<int>(buffer_.size());
    used_ = buffer_.size();
    return true;
  }
  void BackUp(int count) override { used_ -= static_cast<size_t>(count); }
  int64_t ByteCount() const override { return static_cast<int64_t>(handed_over_ + used_); }
  bool AllowsAliasing() const override { return true; }
  bool WriteAliasedRaw(const void* data, int size) override {
    return Flush() &&
           HandOver(std::span(static_cast<const std::byte*>(data), static_cast<size_t>(size)));
  }

  // Hands the buffer's bytes over.
  bool Flush() { return HandOver(std::span(buffer_.data(), std::exchange(used_, 0))); }
  const Status& status() const { return status_; }

 private:
  bool HandOver(std::span<const std::byte> bytes) {
    if (!status_.ok()) return false;
    if (bytes.empty()) return true;
    status_ = sink_(offset_ + handed_over_, bytes);
    handed_over_ += bytes.size();
    return status_.ok();
  }

  const PositionalSink& sink_;
  const uint64_t offset_;
  std::vector<std::byte> buffer_;
  size_t used_ = 0;
  uint64_t handed_over_ = 0;
  Status status_;
};

// Serializes `message`, sized already, into the sink at `offset`.
Status StreamMessage(const MessageLite& message, const PositionalSink& sink, uint64_t offset) {
  SinkStream stream(sink, offset);
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.EnableAliasing(true);
    message.SerializeWithCachedSizes(&coded);
  }  // gives back the part of the buffer it did not fill
  stream.Flush();
  ZG_RETURN_IF_ERROR(stream.status());
  ZG_CHECK(stream.ByteCount() == message.GetCachedSize(), "a message sized ",
           message.GetCachedSize(), " bytes serialized to ", stream.ByteCount());
  return Status::Ok();
}

std::span<const std::byte> AsBytes(const std::string& bytes) {
  return std::as_bytes(std::span(bytes.data(), bytes.size()));
}

void Append(std::string& out, std::span<const std::byte> bytes) {
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Serializes a sized chunk into the sink at its offset as protobuf writes repeated messages: per
// message its tag, its length and its bytes, a node's with the fields the graph holds (its lead
// before, its appendix after its attributes), a fused initializer's with its raw data. The bytes
// go a buffer at a time, a large message's from the message itself and a fused initializer's
// raw data as it is made: no copy of a fused bucket's hundreds of MB is held.
Status WriteChunk(const onnx::GraphProto& fields, const HeldFields* held_fields, const Chunk& chunk,
                  const PositionalSink& sink) {
  std::string out;
  out.reserve(std::min<uint64_t>(chunk.size, 2 * kStreamedMessageBytes));
  uint64_t offset = chunk.offset;
  auto hand_over = [&]() -> Status {
    if (out.empty()) return Status::Ok();
    ZG_RETURN_IF_ERROR(sink(offset, AsBytes(out)));
    offset += out.size();
    out.clear();
    return Status::Ok();
  };
  const bool nodes = held_fields != nullptr && chunk.field == kGraphNode;
  std::vector<std::byte> fused_buffer;
  for (size_t i = chunk.begin; i < chunk.end; ++i) {
    const MessageLite& message = MessageAt(fields, chunk.field, i);
    const size_t size = static_cast<size_t>(message.GetCachedSize());
    const size_t lead = nodes ? held_fields->LeadSize(i) : 0;
    const std::span<const std::byte> appendix =
        nodes ? held_fields->Appendix(i) : std::span<const std::byte>();
    const FusedBytes* fused = FusedAt(held_fields, chunk, i);
    AppendVarint(out, LengthDelimitedTag(chunk.field));
    AppendVarint(out, lead + size + appendix.size() +
                          (fused != nullptr ? RawDataFieldSize(fused->size()) : 0));
    if (fused != nullptr) {
      // The message's fields go around the raw data, by field number.
      std::string message_fields(size, '\0');
      message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(message_fields.data()));
      FieldSplicer splicer(message_fields);
      Append(out, splicer.Before(kTensorRawData));
      AppendVarint(out, LengthDelimitedTag(kTensorRawData));
      AppendVarint(out, fused->size());
      ZG_RETURN_IF_ERROR(hand_over());
      fused_buffer.resize(std::min(fused->size(), kFusedBufferBytes));
      ZG_RETURN_IF_ERROR(fused->Write(fused_buffer, [&](std::span<const std::byte> bytes) {
        ZG_RETURN_IF_ERROR(sink(offset, bytes));
        offset += bytes.size();
        return Status::Ok();
      }));
      Append(out, splicer.Rest());
      continue;
    }
    if (size >= kStreamedMessageBytes && lead == 0 && appendix.empty()) {
      ZG_RETURN_IF_ERROR(hand_over());
      ZG_RETURN_IF_ERROR(StreamMessage(message, sink, offset));
      offset += size;
      continue;
    }
    const size_t at = out.size();
    out.resize(at + lead + size);
    auto* bytes = reinterpret_cast<uint8_t*>(out.data() + at);
    if (nodes) {
      const uint8_t* lead_end = held_fields->WriteLead(i, bytes);
      ZG_CHECK(lead_end == bytes + lead, "node ", i, ": its names took ", lead_end - bytes,
               " bytes, not the ", lead, " sized");
    }
    message.SerializeWithCachedSizesToArray(bytes + lead);
    if (!appendix.empty()) {
      out.insert(at + lead + AppendixOffset(bytes + lead, size),
                 reinterpret_cast<const char*>(appendix.data()), appendix.size());
    }
    if (out.size() >= kStreamedMessageBytes) ZG_RETURN_IF_ERROR(hand_over());
  }
  ZG_RETURN_IF_ERROR(hand_over());
  ZG_CHECK(offset == chunk.offset + chunk.size, "a chunk sized ", chunk.size, " bytes took ",
           offset - chunk.offset);
  return Status::Ok();
}

Status SerializePlainly(const onnx::ModelProto& model, const PositionalSink& sink,
                        const HeldFields* held_fields) {
  std::string bytes;
  if (held_fields == nullptr) {
    ZG_RETURN_IF_NOT(model.SerializeToString(&bytes), "cannot serialize the model");
    return sink(0, AsBytes(bytes));
  }
  // Rare (unknown fields), so the graph's fields go into a copy rather than beside the serializer.
  onnx::ModelProto copy = model;
  for (int i = 0; i < copy.graph().node_size(); ++i) {
    held_fields->AddTo(static_cast<size_t>(i), *copy.mutable_graph()->mutable_node(i));
  }
  for (int i = 0; i < copy.graph().initializer_size(); ++i) {
    const FusedBytes* fused = held_fields->FusedInitializer(static_cast<size_t>(i));
    if (fused == nullptr) continue;
    std::string raw(fused->size(), '\0');
    ZG_RETURN_IF_ERROR(fused->Fill(std::as_writable_bytes(std::span(raw))));
    copy.mutable_graph()->mutable_initializer(i)->set_raw_data(std::move(raw));
  }
  ZG_RETURN_IF_NOT(copy.SerializeToString(&bytes), "cannot serialize the model");
  return sink(0, AsBytes(bytes));
}

}  // namespace

Status SerializeModel(onnx::ModelProto& model, int threads, const PositionalSink& sink,
                      const HeldFields* held_fields) {
  if (!model.has_graph() || !model.unknown_fields().empty() ||
      !model.graph().unknown_fields().empty()) {
    return SerializePlainly(model, sink, held_fields);
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  const RepeatedFieldsAside aside(graph);
  const onnx::GraphProto& fields = aside.fields();
  std::vector<Chunk> chunks = ChunksOf(fields);
  ZG_RETURN_IF_ERROR(ParallelFor(chunks.size(), threads, [&](size_t c) {
    SizeChunk(fields, held_fields, chunks[c]);
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
  // chunks by field number, the model's fields after the graph. The pieces between the chunks are
  // written beside them, each a task of its own: the model's metadata may be large (a state
  // binding names every parameter and state, 25 MB at 1M nodes), and written first, on its own,
  // it left the other threads waiting.
  struct Piece {
    uint64_t offset;
    std::span<const std::byte> bytes;
  };
  std::vector<Piece> pieces;
  uint64_t offset = 0;
  auto put = [&](std::span<const std::byte> bytes) {
    if (!bytes.empty()) pieces.push_back({offset, bytes});
    offset += bytes.size();
  };
  FieldSplicer model_splicer(model_fields);
  put(model_splicer.Before(kModelGraph));
  put(AsBytes(graph_header));
  FieldSplicer graph_splicer(graph_fields);
  for (Chunk& chunk : chunks) {
    put(graph_splicer.Before(chunk.field));
    chunk.offset = offset;
    offset += chunk.size;
  }
  put(graph_splicer.Rest());
  put(model_splicer.Rest());
  return ParallelFor(pieces.size() + chunks.size(), threads, [&](size_t task) {
    if (task < pieces.size()) return sink(pieces[task].offset, pieces[task].bytes);
    return WriteChunk(fields, held_fields, chunks[task - pieces.size()], sink);
  });
}

}  // namespace zerograph
