#include "onnx/model_parser.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <future>
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

// A node's name, input or output: fields the graph holds itself (read by ReadNames), so that the
// parser leaves them out of the node's message.
bool IsNameField(const WireField& field) {
  return field.wire_type == kWireLengthDelimited && field.number >= kNodeInput &&
         field.number <= kNodeName;
}

// Parses the node at [begin, end) into `node` without its names (IsNameField): their strings are
// most of a parsed node's memory, a heap buffer each past 15 characters, and the graph copies the
// few it keeps (one per value, not one per use) from the file. A name present but empty stays in
// the message, as protobuf's serializer writes it back. Bytes the scan cannot read are parsed
// whole, names included.
bool ParseNodeWithoutNames(const uint8_t* begin, const uint8_t* end, onnx::NodeProto& node) {
  const uint8_t* run = begin;  // the kept fields not merged yet start here
  bool parsed_any = false;
  auto merge_run = [&](const uint8_t* run_end) {
    if (run == run_end) return true;
    const int size = static_cast<int>(run_end - run);
    if (!parsed_any) {
      parsed_any = true;
      return node.ParseFromArray(run, size);
    }
    google::protobuf::io::CodedInputStream coded(run, size);
    return node.MergeFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  };
  std::optional<bool> last_name_empty;
  for (WireScanner scan(begin, end); !scan.done();) {
    const std::optional<WireField> field = scan.Next();
    if (!field.has_value()) {
      node.Clear();
      return node.ParseFromArray(begin, static_cast<int>(end - begin));
    }
    if (!IsNameField(*field)) continue;
    if (!merge_run(field->begin)) return false;
    run = field->end;
    if (field->number == kNodeName) last_name_empty = field->payload == field->end;
  }
  if (!merge_run(end)) return false;
  if (last_name_empty == true) node.set_name("");
  return true;
}

std::string_view ViewOf(const WireField& field) {
  return {reinterpret_cast<const char*>(field.payload),
          static_cast<size_t>(field.end - field.payload)};
}

// Appends the names of the node whose bytes are [begin, end) to `names`, as parsing the node
// whole would give them (the last name wins); false, appending nothing, when the scan cannot read
// the bytes (ParseNodeWithoutNames then parsed them whole).
bool AppendNamesFromBytes(const uint8_t* begin, const uint8_t* end, NodeNameList& names) {
  NodeNameList::Entry entry;
  const size_t first = names.values.size();
  bool input_after_output = false;
  for (WireScanner scan(begin, end); !scan.done();) {
    const std::optional<WireField> field = scan.Next();
    if (!field.has_value()) {
      names.values.resize(first);
      return false;
    }
    if (!IsNameField(*field)) continue;
    if (field->number == kNodeName) {
      entry.name = ViewOf(*field);
      continue;
    }
    names.values.push_back(ViewOf(*field));
    if (field->number == kNodeInput) {
      ++entry.num_inputs;
      input_after_output |= entry.num_outputs > 0;
    } else {
      ++entry.num_outputs;
    }
  }
  if (input_after_output) {  // rare: the lists interleave
    names.values.resize(first);
    for (const uint32_t number : {kNodeInput, kNodeOutput}) {
      for (WireScanner scan(begin, end); !scan.done();) {
        const WireField field = *scan.Next();  // the first scan read it
        if (IsNameField(field) && field.number == number) names.values.push_back(ViewOf(field));
      }
    }
  }
  names.nodes.push_back(entry);
  return true;
}

// Where a scan over the graph's fields is, with the split fields it has counted by group: a
// point from which another scan can lay out the items that follow.
struct ScanMark {
  const uint8_t* at;
  size_t counts[3];  // by ItemGroup

  size_t total() const { return counts[kSources] + counts[kNodes] + counts[kRest]; }
};

// Counts the split fields from `mark` to `end`, appending a mark every
// ModelParser::kFieldsPerMark of them, and stops early at the end of a field where
// `stops_at(position)`. Where it stopped, or nullopt when the bytes are not fields it can read.
template <typename StopsAt>
std::optional<ScanMark> CountFields(ScanMark mark, const uint8_t* end, std::vector<ScanMark>& marks,
                                    StopsAt stops_at) {
  for (WireScanner scan(mark.at, end); !scan.done();) {
    const std::optional<WireField> field = scan.Next();
    if (!field.has_value()) return std::nullopt;
    mark.at = field->end;
    if (IsSplitField(*field)) {
      ++mark.counts[GroupOf(field->number)];
      if (mark.total() % ModelParser::kFieldsPerMark == 0) marks.push_back(mark);
    }
    if (stops_at(mark.at)) break;
  }
  return mark;
}

// The first position from `from` on where a scan reads a run of split fields, likely the start
// of one; null when there is none near.
const uint8_t* LikelyFieldStart(const uint8_t* from, const uint8_t* end) {
  constexpr int kFieldsInARun = 16;
  constexpr size_t kSearchedBytes = size_t{64} << 10;
  for (const uint8_t* at = from; at < std::min(end, from + kSearchedBytes); ++at) {
    WireScanner scan(at, end);
    int run = 0;
    for (; run < kFieldsInARun && !scan.done(); ++run) {
      const std::optional<WireField> field = scan.Next();
      if (!field.has_value() || !IsSplitField(*field)) break;
    }
    if (run == kFieldsInARun) return at;
  }
  return nullptr;
}

// Counts the graph's split fields in [begin, end), marking every ModelParser::kFieldsPerMark of
// them (the first mark is `begin`'s); nullopt when the bytes are not fields the scan can read.
//
// A large graph's second half is counted on another thread, from a point found by its bytes
// (LikelyFieldStart), which may lie inside a field. The first half's count goes on past that
// point until it stands where the other count marked: from there both read the same fields, so
// the other count's tail is this one's. Where they never meet, the first count goes on alone.
std::optional<ScanMark> CountGraphFields(const uint8_t* begin, const uint8_t* end, int threads,
                                         std::vector<ScanMark>& marks) {
  marks = {{begin, {0, 0, 0}}};
  auto never = [](const uint8_t*) { return false; };
  const uint8_t* guess = nullptr;
  if (threads > 1 && static_cast<size_t>(end - begin) >= 2 * ModelParser::kBytesPerCountingThread) {
    guess = LikelyFieldStart(begin + (end - begin) / 2, end);
  }
  if (guess == nullptr) return CountFields(marks.front(), end, marks, never);

  struct Tail {
    std::vector<ScanMark> marks;
    std::optional<ScanMark> stop;
  };
  std::future<Tail> tail = RunOnTheSide([guess, end, never] {
    Tail counted{.marks = {{guess, {0, 0, 0}}}, .stop = std::nullopt};
    counted.stop = CountFields(counted.marks.front(), end, counted.marks, never);
    return counted;
  });
  std::optional<ScanMark> head =
      CountFields(marks.front(), end, marks, [guess](const uint8_t* at) { return at >= guess; });
  Tail other = tail.get();
  if (!head.has_value() || head->at == end) return head;
  if (!other.stop.has_value()) return CountFields(*head, end, marks, never);
  size_t meet = 0;  // the other count's first mark not passed
  auto meets = [&](const uint8_t* at) {
    while (meet < other.marks.size() && other.marks[meet].at < at) ++meet;
    return meet < other.marks.size() && other.marks[meet].at == at;
  };
  if (!meets(head->at)) head = CountFields(*head, end, marks, meets);
  if (!head.has_value() || head->at == end) return head;
  // Met: the other count's marks from here on, and its end, shifted by the difference.
  auto shifted = [&](const ScanMark& mark) {
    ScanMark moved = mark;
    for (size_t g = 0; g < 3; ++g) {
      moved.counts[g] = head->counts[g] + mark.counts[g] - other.marks[meet].counts[g];
    }
    return moved;
  };
  for (size_t k = meet + 1; k < other.marks.size(); ++k) marks.push_back(shifted(other.marks[k]));
  return shifted(*other.stop);
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
  // It marks where it is every kFieldsPerMark of them, and a second scan from the marks lays them
  // out in parts on the threads.
  std::vector<ScanMark> marks;
  const std::optional<ScanMark> at =
      CountGraphFields(graph_field->payload, graph_field->end, threads, marks);
  if (!at.has_value()) return parse_plainly();
  const size_t* counts = at->counts;
  parser->num_sources_ = counts[kSources];
  parser->nodes_.resize(counts[kNodes]);
  const size_t num_items = at->total();
  // Not value-initialized: the parts write every item.
  parser->item_storage_ = std::make_unique_for_overwrite<Item[]>(num_items);
  parser->items_ = std::span(parser->item_storage_.get(), num_items);
  const int parts = static_cast<int>(std::min<size_t>(std::max(threads, 1), marks.size()));
  std::vector<OtherFields> graph_fields(static_cast<size_t>(parts));
  ZG_RETURN_IF_ERROR(ParallelFor(static_cast<size_t>(parts), parts, [&](size_t part) {
    const ScanMark& from = marks[part * marks.size() / static_cast<size_t>(parts)];
    const size_t to_mark = (part + 1) * marks.size() / static_cast<size_t>(parts);
    const uint8_t* to = to_mark < marks.size() ? marks[to_mark].at : graph_field->end;
    Item* const items = parser->items_.data();
    Item* next[3] = {items + from.counts[kSources], items + counts[kSources] + from.counts[kNodes],
                     items + counts[kSources] + counts[kNodes] + from.counts[kRest]};
    for (WireScanner scan(from.at, to); !scan.done();) {
      const WireField field = *scan.Next();  // the first scan read it
      if (IsSplitField(field)) {
        *next[GroupOf(field.number)]++ = {
            field.payload, static_cast<uint32_t>(field.end - field.payload), field.number, nullptr};
      } else {
        graph_fields[part].Add(field);
      }
    }
    return Status::Ok();
  }));

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
  // The model's and the graph's own fields (the metadata among them) are parsed while the
  // threads parse the items, which do not touch them.
  onnx::GraphProto& graph = *model.mutable_graph();
  parser->graph_ = &graph;
  if (!model_fields.MergeInto(model)) return NotAModel();
  for (const OtherFields& fields : graph_fields) {
    if (!fields.MergeInto(graph)) return NotAModel();
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
    const bool parsed =
        item.field == kGraphNode
            ? ParseNodeWithoutNames(item.payload, item.end(),
                                    *static_cast<onnx::NodeProto*>(item.message))
            : item.message->ParseFromArray(item.payload, static_cast<int>(item.size));
    if (!parsed) return i;
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
  // The builder reads the nodes it awaited last by their bytes (ReadNames) until it awaits more;
  // it reads everything else as messages.
  const size_t nodes_read_from = std::max(awaited_items_, num_sources_);
  awaited_items_ = std::max(awaited_items_, count);
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
    HandOverDone(awaited_chunks_ + 1, nodes_read_from);
  }
  HandOverDone(awaited_chunks_, nodes_read_from);
  return Status::Ok();
}

void ModelParser::HandOverDone(size_t parsed_chunks, size_t nodes_read_from) {
  const size_t nodes_end = num_sources_ + nodes_.size();
  size_t done = done_chunks_;
  for (; done < parsed_chunks; ++done) {
    const size_t begin = done * kChunkItems;
    const size_t end = std::min(items_.size(), begin + kChunkItems);
    if (std::max(begin, nodes_read_from) < std::min(end, nodes_end)) break;  // nodes still read
  }
  if (done - done_chunks_ < kDoneWithChunks && !(done == num_chunks_ && done > done_chunks_)) {
    return;
  }
  DoneWith(done_chunks_ * kChunkItems, std::min(items_.size(), done * kChunkItems));
  done_chunks_ = done;
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

void ModelParser::ReadNames(size_t begin, size_t end, NodeNameList& names) const {
  for (size_t i = begin; i < end; ++i) {
    // Messages parsed whole (a model parsed plainly has no items) hold their names.
    if (items_.empty() || !AppendNamesFromBytes(items_[num_sources_ + i].payload,
                                                items_[num_sources_ + i].end(), names)) {
      AppendNamesOf(std::span(nodes_).subspan(i, 1), names);
    }
  }
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
