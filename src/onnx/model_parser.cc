#include "onnx/model_parser.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "onnx/wire_format.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

using google::protobuf::MessageLite;

// Fields of a message the split leaves to protobuf: byte ranges in file order, touching ones
// joined.
class OtherFields {
 public:
  void Add(const WireField& field) {
    if (!ranges_.empty() && ranges_.back().second == field.begin) {
      ranges_.back().second = field.end;
    } else {
      ranges_.emplace_back(field.begin, field.end);
    }
  }

  // Merges the fields into `message`: parsing a message's fields piece by piece gives what parsing
  // them in one piece gives (protobuf's merge rule).
  bool MergeInto(MessageLite& message) const {
    for (const auto& [begin, end] : ranges_) {
      google::protobuf::io::CodedInputStream coded(begin, static_cast<int>(end - begin));
      coded.SetTotalBytesLimit(INT_MAX);
      if (!message.MergeFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) return false;
    }
    return true;
  }

 private:
  std::vector<std::pair<const uint8_t*, const uint8_t*>> ranges_;
};

bool IsSplitField(const WireField& field) {
  if (field.wire_type != kWireLengthDelimited) return false;
  switch (field.number) {
    case kGraphNode:
    case kGraphInitializer:
    case kGraphInput:
    case kGraphOutput:
    case kGraphValueInfo:
      return true;
    default:
      return false;
  }
}

// The three groups of the graph's split fields, in the order the graph is built from them.
enum ItemGroup { kSources, kNodes, kRest };

ItemGroup GroupOf(uint32_t split_field) {
  switch (split_field) {
    case kGraphInitializer:
    case kGraphInput:
      return kSources;
    case kGraphNode:
      return kNodes;
    default:
      return kRest;
  }
}

Status NotAModel() {
  return DataLossError("the file is not a valid ONNX model (protobuf parse failed)");
}

}  // namespace

StatusOr<std::unique_ptr<ModelParser>> ModelParser::Start(
    std::span<const std::byte> bytes, int threads,
    std::function<void(std::span<const std::byte>)> done_with) {
  ZG_RETURN_IF_NOT(bytes.size() <= INT_MAX, "the model is ", bytes.size(),
                   " bytes; protobuf cannot read a message of 2 GiB or more");
  std::unique_ptr<ModelParser> parser(new ModelParser());
  parser->store_ = std::make_unique<ProtoStore>();
  onnx::ModelProto& model = *parser->store_->model;
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto* end = begin + bytes.size();
  parser->file_begin_ = begin;
  parser->done_with_ = std::move(done_with);
  parser->arena_ = &parser->store_->arena;

  auto parse_plainly = [&]() -> StatusOr<std::unique_ptr<ModelParser>> {
    google::protobuf::io::CodedInputStream coded(begin, static_cast<int>(bytes.size()));
    coded.SetTotalBytesLimit(INT_MAX);
    model.Clear();
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) return NotAModel();
    if (model.has_graph()) {
      google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes =
          *model.mutable_graph()->mutable_node();
      parser->nodes_.resize(static_cast<size_t>(nodes.size()));
      nodes.UnsafeArenaExtractSubrange(0, nodes.size(), parser->nodes_.data());
    }
    parser->sources_added_ = true;
    parser->rest_added_ = true;
    return std::move(parser);
  };

  // The model's fields: the graph, and the others, left to protobuf.
  std::optional<WireField> graph_field;
  OtherFields model_fields;
  for (WireScanner scan(begin, end); !scan.done();) {
    const std::optional<WireField> field = scan.Next();
    if (!field.has_value()) return parse_plainly();
    if (field->number != kModelGraph || field->wire_type != kWireLengthDelimited) {
      model_fields.Add(*field);
    } else if (graph_field.has_value()) {
      return parse_plainly();  // two graph fields merge: rare enough to leave to protobuf
    } else {
      graph_field = field;
    }
  }
  if (!graph_field.has_value()) return parse_plainly();

  // The graph's fields: its repeated fields split out in the order the graph is built from them
  // (initializers and inputs, nodes, the rest), the others left to protobuf. A first scan counts
  // them, so that the items are laid out in place: a million-node graph has about two million.
  size_t counts[3] = {0, 0, 0};  // by ItemGroup
  for (WireScanner scan(graph_field->payload, graph_field->end); !scan.done();) {
    const std::optional<WireField> field = scan.Next();
    if (!field.has_value()) return parse_plainly();
    if (IsSplitField(*field)) ++counts[GroupOf(field->number)];
  }
  parser->num_sources_ = counts[kSources];
  parser->nodes_.resize(counts[kNodes]);
  parser->items_.resize(counts[kSources] + counts[kNodes] + counts[kRest]);
  Item* next[3] = {parser->items_.data(), parser->items_.data() + counts[kSources],
                   parser->items_.data() + counts[kSources] + counts[kNodes]};
  OtherFields graph_fields;
  for (WireScanner scan(graph_field->payload, graph_field->end); !scan.done();) {
    const WireField field = *scan.Next();  // the first scan read it
    if (IsSplitField(field)) {
      *next[GroupOf(field.number)]++ = {
          field.payload, static_cast<uint32_t>(field.end - field.payload), field.number};
    } else {
      graph_fields.Add(field);
    }
  }

  onnx::GraphProto& graph = *model.mutable_graph();
  parser->graph_ = &graph;
  if (!model_fields.MergeInto(model) || !graph_fields.MergeInto(graph)) return NotAModel();

  parser->num_chunks_ = (parser->items_.size() + kChunkItems - 1) / kChunkItems;
  parser->chunks_ = std::make_unique<Chunk[]>(parser->num_chunks_);
  // However many start, they and the caller's thread parse it all.
  if (threads > 1 && parser->num_chunks_ > 1) {
    StartThreads(
        std::min(static_cast<size_t>(threads - 1), parser->num_chunks_ - 1),
        [raw = parser.get()] {
          while (raw->ParseNextChunk()) {
          }
        },
        parser->workers_);
  }
  // Alone, parsing everything first is faster than taking turns with building the graph: the
  // parse's and the graph's memory are then not interleaved.
  if (parser->workers_.empty()) {
    while (parser->ParseNextChunk()) {
    }
  }
  return parser;
}

size_t ModelParser::ParseItems(std::span<Item> items) {
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    google::protobuf::Arena* arena = arena_;  // thread-safe
    switch (item.field) {
      case kGraphNode:
        item.message = google::protobuf::Arena::CreateMessage<onnx::NodeProto>(arena);
        break;
      case kGraphInitializer:
        item.message = google::protobuf::Arena::CreateMessage<onnx::TensorProto>(arena);
        break;
      default:
        item.message = google::protobuf::Arena::CreateMessage<onnx::ValueInfoProto>(arena);
        break;
    }
    if (!item.message->ParseFromArray(item.payload, static_cast<int>(item.size))) {
      return i;
    }
  }
  return items.size();
}

bool ModelParser::ParseNextChunk() {
  const size_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
  if (c >= num_chunks_ || stop_.load(std::memory_order_relaxed)) return false;
  const size_t begin = c * kChunkItems;
  const size_t end = std::min(items_.size(), begin + kChunkItems);
  const size_t failed = begin + ParseItems(std::span(items_).subspan(begin, end - begin));
  const size_t nodes_end = num_sources_ + nodes_.size();
  for (size_t i = std::max(begin, num_sources_); i < std::min(failed, nodes_end); ++i) {
    nodes_[i - num_sources_] = static_cast<onnx::NodeProto*>(items_[i].message);
  }
  Chunk& chunk = chunks_[c];
  chunk.failed_at = failed;
  chunk.state.store(failed == end ? kParsed : kFailed, std::memory_order_release);
  chunk.state.notify_all();
  return true;
}

Status ModelParser::AwaitItems(size_t count) {
  const size_t needed = (count + kChunkItems - 1) / kChunkItems;
  for (; awaited_chunks_ < needed; ++awaited_chunks_) {
    Chunk& chunk = chunks_[awaited_chunks_];
    // Rather than wait for a thread still on this chunk, parse a later one.
    while (chunk.state.load(std::memory_order_acquire) == kPending && ParseNextChunk()) {
    }
    chunk.state.wait(kPending, std::memory_order_acquire);
    if (chunk.state.load(std::memory_order_acquire) == kFailed) {
      return ItemError(items_[chunk.failed_at]);
    }
    if (awaited_chunks_ + 1 - done_chunks_ == kDoneWithChunks ||
        awaited_chunks_ + 1 == num_chunks_) {
      DoneWith(done_chunks_ * kChunkItems,
               std::min(items_.size(), (awaited_chunks_ + 1) * kChunkItems));
      done_chunks_ = awaited_chunks_ + 1;
    }
  }
  return Status::Ok();
}

void ModelParser::DoneWith(size_t begin, size_t end) {
  if (done_with_ == nullptr) return;
  // Each group's items lie in file order, bar fields of other kinds between them.
  for (const size_t group_end : {num_sources_, num_sources_ + nodes_.size(), items_.size()}) {
    const size_t run_end = std::min(end, group_end);
    if (begin < run_end) {
      done_with_(std::as_bytes(std::span(items_[begin].payload, items_[run_end - 1].end())));
      begin = run_end;
    }
  }
}

Status ModelParser::AwaitSources() {
  if (sources_added_) return Status::Ok();
  ZG_RETURN_IF_ERROR(AwaitItems(num_sources_));
  for (size_t i = 0; i < num_sources_; ++i) {
    const Item& item = items_[i];
    if (item.field == kGraphInitializer) {
      graph_->mutable_initializer()->UnsafeArenaAddAllocated(
          static_cast<onnx::TensorProto*>(item.message));
    } else {
      graph_->mutable_input()->UnsafeArenaAddAllocated(
          static_cast<onnx::ValueInfoProto*>(item.message));
    }
  }
  sources_added_ = true;
  return Status::Ok();
}

StatusOr<std::span<onnx::NodeProto* const>> ModelParser::AwaitNodes(size_t count) {
  // A model parsed plainly has no items: its nodes are all there.
  ZG_RETURN_IF_ERROR(AwaitItems(std::min(num_sources_ + count, items_.size())));
  return std::span<onnx::NodeProto* const>(nodes_);
}

Status ModelParser::AwaitRest() {
  if (rest_added_) return Status::Ok();
  ZG_RETURN_IF_ERROR(AwaitItems(items_.size()));
  for (size_t i = num_sources_ + nodes_.size(); i < items_.size(); ++i) {
    auto* info = static_cast<onnx::ValueInfoProto*>(items_[i].message);
    if (items_[i].field == kGraphOutput) {
      graph_->mutable_output()->UnsafeArenaAddAllocated(info);
    } else {
      graph_->mutable_value_info()->UnsafeArenaAddAllocated(info);
    }
  }
  rest_added_ = true;
  return Status::Ok();
}

void ModelParser::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

Status ModelParser::ItemError(const Item& item) const {
  std::string_view what;
  switch (item.field) {
    case kGraphNode:
      what = "a node";
      break;
    case kGraphInitializer:
      what = "an initializer";
      break;
    case kGraphInput:
      what = "a graph input";
      break;
    case kGraphOutput:
      what = "a graph output";
      break;
    default:
      what = "a value_info entry";
      break;
  }
  return DataLossError(StrCat("the file is not a valid ONNX model (protobuf parse failed in ", what,
                              " of the main graph, at byte ", item.payload - file_begin_, ")"));
}

}  // namespace zerograph
