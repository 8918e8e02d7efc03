#ifndef ZEROGRAPH_SRC_ONNX_MODEL_PARSER_H_
#define ZEROGRAPH_SRC_ONNX_MODEL_PARSER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph_feed.h"
#include "zerograph/ir/proto_store.h"

namespace google::protobuf {
class Arena;
class MessageLite;
}  // namespace google::protobuf

namespace zerograph {

// Parses a serialized ONNX model on several threads, handing the main graph's messages over as
// they are parsed (GraphFeed), so that the graph is built while the rest is still parsed.
//
// Why: parsing is about half of loading a large graph, and protobuf parses one message on one
// thread. The main graph's nodes, initializers and value lists are independent messages laid end
// to end in the file: a scan of the graph's top-level wire format finds their bounds (for a
// million nodes, 25 ms to count them from both ends and 35 ms to lay them out, on two threads),
// and each is parsed into its own arena message. The result is the model a plain parse gives, but
// that the nodes' messages lack their names, inputs and outputs, which the graph holds itself and
// reads from the bytes (ReadNames).
//
// Anything the scan does not expect (a second graph field, groups, a malformed field) makes it
// parse the whole model the plain way, which accepts what protobuf accepts and refuses the rest.
class ModelParser final : public GraphFeed {
 public:
  // Scans the model, parses its own fields and the graph's non-repeated ones, and starts
  // `threads - 1` threads on the graph's initializers and inputs, nodes, then value_info and
  // outputs, in that order, which the caller's thread joins in as it awaits them. With one
  // thread, parses everything before returning. `bytes` must outlive the parser. `done_with`,
  // when given, is told (on the caller's thread, by the awaits) of ranges of `bytes` the parser
  // has parsed and no one reads again (a node's, once the nodes after it are awaited), a few MB
  // at a time, so that a reader of a mapped file can drop its pages as it goes
  // (MappedFile::Evict): at the peak of loading a large model, the file's pages are otherwise its
  // largest single part.
  static StatusOr<std::unique_ptr<ModelParser>> Start(
      std::span<const std::byte> bytes, int threads,
      std::function<void(std::span<const std::byte>)> done_with = nullptr);
  // The graph's messages counted between two points from which Start can lay them out on
  // another thread (some hundreds of KB of a file of small nodes).
  static constexpr size_t kFieldsPerMark = 4096;
  // Bytes of the graph from which Start counts each half of its messages on a thread of its own.
  static constexpr size_t kBytesPerCountingThread = size_t{1} << 20;

  ~ModelParser() override { Stop(); }
  ModelParser(const ModelParser&) = delete;
  ModelParser& operator=(const ModelParser&) = delete;

  // The model's own fields, parsed by Start (its graph's repeated fields may not be yet).
  const onnx::ModelProto& model() const { return *store_->model; }
  // The parsed model, to be taken once. Its graph's repeated fields are filled by the awaits.
  std::unique_ptr<ProtoStore> TakeStore() { return std::move(store_); }

  size_t num_nodes() const override { return nodes_.size(); }
  Status AwaitSources() override;
  StatusOr<std::span<onnx::NodeProto* const>> AwaitNodes(size_t count) override;
  void ReadNames(size_t begin, size_t end, NodeNameList& names) const override;
  Status AwaitRest() override;
  void Stop() override;

 private:
  // One message of the graph's repeated fields, where it lies in the file (24 bytes: a large
  // model has millions, all alive at the peak of loading it).
  struct Item {
    const uint8_t* payload;
    uint32_t size;  // the file is under 2 GiB
    uint32_t field;
    google::protobuf::MessageLite* message;  // null until parsed

    const uint8_t* end() const { return payload + size; }
  };
  // Items are parsed kChunkItems at a time: chunk c holds `items_` [c, c + 1) x kChunkItems.
  // Threads claim chunks in order; the graph builder, rather than wait for a chunk a thread is
  // still on, claims and parses the next one itself.
  static constexpr size_t kChunkItems = 256;
  // Chunks handed to `done_with_` at a time: ~1 MB of a file of small nodes, so that dropping the
  // pages takes few system calls.
  static constexpr size_t kDoneWithChunks = 32;
  enum ChunkState : uint8_t { kPending, kParsed, kFailed };
  struct Chunk {
    std::atomic<uint8_t> state{kPending};
    size_t failed_at = 0;  // the item that did not parse, when kFailed
  };

  ModelParser() = default;
  // Parses `items` in place; returns the index of the first that does not parse, or items.size().
  size_t ParseItems(std::span<Item> items);
  // Claims the next chunk and parses it; false when none is left.
  bool ParseNextChunk();
  // Waits until `items_` [0, count) are parsed, parsing chunks meanwhile.
  Status AwaitItems(size_t count);
  Status ItemError(const Item& item) const;
  // Hands the bytes of the first `parsed_chunks` chunks to `done_with_`, a few MB at a time, up
  // to the first that holds a node at or after `nodes_read_from`, whose bytes the builder still
  // reads.
  void HandOverDone(size_t parsed_chunks, size_t nodes_read_from);
  // Hands the bytes of parsed `items_` [begin, end) to `done_with_`, one range per group.
  void DoneWith(size_t begin, size_t end);

  std::unique_ptr<ProtoStore> store_;
  // The store's arena and graph, which the threads fill after the store is taken.
  google::protobuf::Arena* arena_ = nullptr;
  onnx::GraphProto* graph_ = nullptr;
  const uint8_t* file_begin_ = nullptr;  // for the byte offsets in errors
  std::function<void(std::span<const std::byte>)> done_with_;
  // The initializers and inputs, the nodes, then the value_info entries and outputs, each in file
  // order.
  std::unique_ptr<Item[]> item_storage_;
  std::span<Item> items_;
  size_t num_sources_ = 0;               // initializers and inputs
  std::vector<onnx::NodeProto*> nodes_;  // set as their items are parsed
  std::unique_ptr<Chunk[]> chunks_;
  size_t num_chunks_ = 0;
  std::atomic<size_t> next_chunk_{0};
  size_t awaited_chunks_ = 0;  // chunks the builder has seen parsed
  size_t awaited_items_ = 0;   // items the builder has awaited
  size_t done_chunks_ = 0;     // of those, the ones handed to `done_with_`
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  bool sources_added_ = false;
  bool rest_added_ = false;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_ONNX_MODEL_PARSER_H_
