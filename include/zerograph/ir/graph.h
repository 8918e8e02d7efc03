#ifndef ZEROGRAPH_IR_GRAPH_H_
#define ZEROGRAPH_IR_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/name_index.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace onnx {
class ModelProto;
class NodeProto;
class TensorProto;
class ValueInfoProto;
}  // namespace onnx

namespace zerograph {

class GraphFeed;
class GraphMemory;
class LinkFollower;
class ProtoStore;

// Iterates nodes in schedule order. Editing the node under the iterator (moving or erasing it)
// invalidates the iterator: take `next()` first.
class NodeIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Node*;
  using difference_type = std::ptrdiff_t;
  using pointer = Node**;
  using reference = Node*;

  explicit NodeIterator(Node* node = nullptr) : node_(node) {}
  Node* operator*() const { return node_; }
  NodeIterator& operator++() {
    node_ = node_->next();
    return *this;
  }
  NodeIterator operator++(int) {
    NodeIterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const NodeIterator&, const NodeIterator&) = default;

 private:
  Node* node_;
};

struct NodeRange {
  Node* first;
  NodeIterator begin() const { return NodeIterator(first); }
  NodeIterator end() const { return NodeIterator(nullptr); }
};

// Iterates the nodes of a graph in the order they were made, skipping erased ones.
class StoredNodeIterator {
 public:
  using Pool = std::pmr::deque<Node>;
  using iterator_category = std::forward_iterator_tag;
  using value_type = Node*;
  using difference_type = std::ptrdiff_t;
  using pointer = Node**;
  using reference = Node*;

  StoredNodeIterator(Pool::iterator at, Pool::iterator end) : at_(at), end_(end) { SkipErased(); }
  Node* operator*() const { return &*at_; }
  StoredNodeIterator& operator++() {
    ++at_;
    SkipErased();
    return *this;
  }
  StoredNodeIterator operator++(int) {
    StoredNodeIterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const StoredNodeIterator& a, const StoredNodeIterator& b) {
    return a.at_ == b.at_;
  }

 private:
  void SkipErased() {
    while (at_ != end_ && at_->erased()) ++at_;
  }
  Pool::iterator at_;
  Pool::iterator end_;
};

struct StoredNodeRange {
  StoredNodeIterator first;
  StoredNodeIterator last;
  StoredNodeIterator begin() const { return first; }
  StoredNodeIterator end() const { return last; }
};

// A training program: one ONNX model whose main graph holds nodes in schedule order over SSA
// values.
//
// The graph keeps the parsed ONNX messages it was loaded from (in one arena) and edits them in
// place, so that what a pass does not touch is saved exactly as it was loaded: attributes of every
// kind, doc strings, functions, unknown fields. The names of nodes and of the values they define
// it holds itself, once each, and writes into the nodes' messages as they are saved
// (HeldFields): as strings of the messages, a name per use, they were most of a large graph's
// memory. Every edit the passes need is O(1) amortized: insert, erase, move, "is A before B",
// users of a value.
class Graph {
 public:
  // An empty model: IR version 8, no opsets, no nodes.
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // --- Reading ------------------------------------------------------------------------------
  NodeRange nodes() const { return {first_}; }
  // The same nodes in a vector, found faster than by following the links, a cache miss per node
  // on a large graph, each waiting for the one before: for sweeps in schedule order.
  std::vector<Node*> ScheduledNodes() const;
  Node* first_node() const { return first_; }
  Node* last_node() const { return last_; }
  size_t num_nodes() const { return num_nodes_; }
  // Every node in the order the nodes were made, not in schedule order. A sweep that needs no
  // order (finding candidates, finding a pass's own nodes) reads the nodes where they lie in
  // memory: on a 1M-node graph it takes 30 ms, against 115 ms along the schedule's links.
  StoredNodeRange stored_nodes() const { return stored_nodes(0, 1); }
  // Slice `part` of `parts` equal slices of stored_nodes(), for a sweep on several threads.
  StoredNodeRange stored_nodes(size_t part, size_t parts) const;
  // Upper bounds for `Node::id()` and `Value::id()`, to size side tables.
  int64_t node_id_bound() const { return static_cast<int64_t>(node_pool_.size()); }
  int64_t value_id_bound() const { return static_cast<int64_t>(value_pool_.size()); }

  // The value called `name`, or null.
  Value* FindValue(std::string_view name) const;
  // The node called `name`, or null (unnamed nodes are not found).
  Node* FindNode(std::string_view name) const;
  // FindValue / FindNode of each name, in order. Much faster than a call per name for many names
  // (a training spec names every parameter and state): the lookups' cache misses overlap.
  std::vector<Value*> FindValues(std::span<const std::string_view> names) const;
  std::vector<Node*> FindNodes(std::span<const std::string_view> names) const;
  // FindNode / FindValue of each item's own name, searched for from the hash the graph filed the
  // item under rather than by hashing the name again: for checking in bulk that the name index
  // agrees with the items (Verify).
  std::vector<Node*> FindAsFiled(std::span<const Node* const> nodes) const;
  std::vector<Value*> FindAsFiled(std::span<const Value* const> values) const;

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Initializers in file order.
  std::vector<Value*> initializers() const;

  // --- Building -----------------------------------------------------------------------------
  // Adds a graph input of the given type. `name` must be unused.
  Value* AddInput(std::string_view name, const TensorType& type);
  // Adds an initializer holding a copy of `bytes` (ONNX raw layout), named `name` or, when that is
  // taken, UniqueValueName(name).
  Value* AddInitializer(std::string_view name, DataType dtype, std::span<const int64_t> dims,
                        std::span<const std::byte> bytes);
  // The same, taking over `raw_bytes` (ONNX raw layout) without a copy: a pass that builds large
  // fused buffers need not write them twice.
  Value* AddInitializer(std::string_view name, DataType dtype, std::span<const int64_t> dims,
                        std::string&& raw_bytes);
  // Sets the bytes (ONNX raw layout) of initializer `value`, which must be as many as its type
  // needs: a pass may fill a large buffer elsewhere while it edits the graph.
  Status SetInitializerBytes(Value* value, std::string&& raw_bytes);
  // Makes initializer `value`'s bytes from other tensors of the graph (`fused`, as many bytes as
  // its type needs): they are made when the graph is written or the bytes are read.
  Status SetInitializerBytes(Value* value, std::shared_ptr<const FusedBytes> fused);
  void AddOutput(Value* value);
  // Makes graph output `index` read `value` instead.
  void SetOutput(size_t index, Value* value);
  // Drops every graph output for which `drop(value)` is true, keeping the others' order.
  // O(outputs).
  void EraseOutputsIf(const std::function<bool(const Value*)>& drop);

  // Creates a node named `name` whose outputs are new values called `output_names`, each name
  // made unique as UniqueNodeName and UniqueValueName do when taken. The node is placed before
  // `before`, or at the end of the schedule when `before` is null. A null input is an omitted
  // optional input.
  Node* AddNode(std::string_view op_type, std::string_view domain, std::span<Value* const> inputs,
                std::span<const std::string> output_names, std::string_view name = {},
                Node* before = nullptr);
  Node* AddNode(std::string_view op_type, std::string_view domain,
                std::initializer_list<Value*> inputs,
                std::initializer_list<std::string> output_names, std::string_view name = {},
                Node* before = nullptr) {
    return AddNode(op_type, domain, std::span<Value* const>(inputs.begin(), inputs.size()),
                   std::span<const std::string>(output_names.begin(), output_names.size()), name,
                   before);
  }

  // A value or node name not used yet, made from `base` ("base", "base_1", ...).
  std::string UniqueValueName(std::string_view base) const;
  std::string UniqueNodeName(std::string_view base) const;

  // Records the static type of `value` (written to value_info, or to the graph input or output).
  void SetValueType(Value* value, const TensorType& type);
  // Makes dim `axis` of `value`'s recorded type symbolic, named `symbol` (ONNX's dim_param, such
  // as "batch"), in every entry that writes the type (value_info or graph input, graph outputs):
  // a reader of the file sees which dims share a size. type() reads it as kUnknownDim, and a later
  // SetValueType drops the name. `value` must have a recorded type of rank above `axis`.
  void SetDimParam(Value* value, size_t axis, std::string_view symbol);

  // --- Editing ------------------------------------------------------------------------------
  void SetInput(Node* node, size_t index, Value* value);
  void AppendInput(Node* node, Value* value);
  // Renames `value` (whose producer is a node) to `name`, which must be unused; every reader
  // follows. Returns false, changing nothing, when the name is taken or the value is a source.
  bool RenameValue(Value* value, std::string_view name);
  // Makes every reader of `from` (nodes and graph outputs) read `to`.
  void ReplaceAllUsesWith(Value* from, Value* to);
  // Makes `value` the next output of `node`, with recorded type `type`. The result is what adding
  // a new output, replacing every use of `value` with it, dropping `value` and renaming the output
  // to its name would make, at a fraction of the cost (no reader, name or user list is touched):
  // what defined `value` no longer does (an initializer's data is dropped; another node's output
  // slot becomes an omitted output), its value_info entry moves after the others and, as its
  // graph-output entries, takes `type`. A pass that turns each of many parameters into a view of
  // a fused buffer calls this once per parameter. `value` must not be a graph input.
  void AdoptAsOutput(Node* node, Value* value, const TensorType& type);
  // The same, keeping the type the value's value_info entry records, which it must have: no
  // message is written.
  void AdoptAsOutput(Node* node, Value* value);
  // A value_info message for a value called `name` of type `type`, as SetValueType makes one, on
  // the graph's arena. It only allocates there, so another thread may make messages while this
  // one edits the graph: a pass that adopts a value per parameter makes them ahead.
  onnx::ValueInfoProto* MakeTypeRecord(std::string_view name, const TensorType& type);
  // AdoptAsOutput(node, value, type) with `record`, MakeTypeRecord(value->name(), type), as the
  // value's value_info entry when it has none (else `record` goes unused).
  void AdoptAsOutput(Node* node, Value* value, const TensorType& type,
                     onnx::ValueInfoProto* record);
  // Moves `node` in the schedule to just before / just after `anchor`.
  void MoveBefore(Node* node, Node* anchor);
  void MoveAfter(Node* node, Node* anchor);
  // Removes `node`; fails when one of its outputs is still read or is a graph output.
  Status EraseNode(Node* node);
  // Removes an initializer nothing reads.
  Status EraseInitializer(Value* value) { return EraseInitializers(std::span(&value, 1)); }
  // Removes initializers nothing reads, in order; an error leaves those before it erased.
  Status EraseInitializers(std::span<Value* const> values);

  // --- Model-level data ---------------------------------------------------------------------
  int64_t ir_version() const;
  void SetIrVersion(int64_t version);
  // GraphProto.name; ONNX's checker refuses a model whose graph has none.
  std::string_view name() const;
  void SetName(std::string_view name);
  // The imported version of an operator domain ("" is ONNX's default domain), if imported.
  std::optional<int64_t> OpsetVersion(std::string_view domain) const;
  void SetOpsetVersion(std::string_view domain, int64_t version);
  // The domains of the op types the graph has met, each once, in the order first met: its nodes'
  // (a loaded graph's in file order), and those of nodes since erased. A graph has a handful, so
  // a check per domain costs nothing where one per node reads every node.
  std::vector<std::string_view> OpDomains() const;
  // Whether the graph has met the op (see OpDomains): when not, no node of it needs looking for.
  bool HasMetOp(std::string_view domain, std::string_view op_type) const;
  // ModelProto.metadata_props.
  std::optional<std::string_view> GetMetadata(std::string_view key) const;
  void SetMetadata(std::string_view key, std::string_view value);
  std::vector<std::pair<std::string_view, std::string_view>> metadata() const;

  // --- ONNX form ----------------------------------------------------------------------------
  // Bytes for one external tensor: a mapping of its data file and the tensor's range in it.
  struct ExternalBytes {
    std::shared_ptr<const MappedFile> file;
    std::span<const std::byte> bytes;
  };
  // Resolves an initializer's external data; returns an error naming what is wrong.
  using ExternalDataResolver = std::function<StatusOr<ExternalBytes>(const onnx::TensorProto&)>;

  // Builds the IR over a parsed model (the graph takes the store). Checks what SSA needs: every
  // value defined once, every input defined before it is read, unique node names. Errors name the
  // node or value. `feed`, when given, hands over the main graph's messages while a parser still
  // makes them (the store's graph then lacks them); the graph stops it before returning.
  // `follower`, when given, is told of each run of nodes linked, and stopped if building fails.
  static StatusOr<std::unique_ptr<Graph>> FromModelProto(std::unique_ptr<ProtoStore> store,
                                                         const ExternalDataResolver& resolve,
                                                         GraphFeed* feed = nullptr,
                                                         LinkFollower* follower = nullptr);

  // Rewrites an external tensor's location entries in `copy` (a copy of its message), writing its
  // bytes where the saved model expects them.
  using ExternalDataWriter = std::function<Status(const Tensor&, onnx::TensorProto& copy)>;

  // The fields of the model's nodes and initializers that the graph holds instead of their
  // messages, for the writer to write as protobuf would if the messages held them: a node's
  // inputs, outputs and name (fields 1-3, which come before every field a message holds: a
  // message per name would be most of a large graph's memory), a role set by SetRole (after the
  // node's attributes: an attribute message per node would be 110 MB at a million nodes), and a
  // fused initializer's raw data (FusedBytes). Indexed by a node's or initializer's position in
  // the model; read from several threads at once.
  class HeldFields {
   public:
    virtual ~HeldFields() = default;
    // Node `index`'s inputs, outputs and name in wire format: their size, and writing them at
    // `out` (returns the end).
    virtual size_t LeadSize(size_t index) const = 0;
    virtual uint8_t* WriteLead(size_t index, uint8_t* out) const = 0;
    // Fields in wire format that go after node `index`'s attributes; empty for most nodes.
    virtual std::span<const std::byte> Appendix(size_t index) const = 0;
    // Adds the fields to `node`, node `index`'s message: what a reader of the file parses.
    void AddTo(size_t index, onnx::NodeProto& node) const;
    // Initializer `index`'s raw data when the graph makes it (its message then holds none), else
    // null.
    virtual const FusedBytes* FusedInitializer(size_t /*index*/) const { return nullptr; }
  };

  // Assembles the ONNX model in schedule order and hands it to `consume` (which serializes it),
  // with the fields its nodes' messages lack (HeldFields). External initializers are passed
  // through `write_external` first. The message is valid only during the call; `consume` may
  // change it meanwhile (a parallel serializer takes fields out) if it leaves it as it was.
  Status WithModelProto(const ExternalDataWriter& write_external,
                        const std::function<Status(onnx::ModelProto&, const HeldFields&)>& consume);

 private:
  friend class Node;
  Value* NewValue(std::string_view name);
  Node* NewNode();
  // Gives `node` its message, whose op type and domain it then reads without a lookup.
  void AttachProto(Node* node, onnx::NodeProto* proto);
  // A copy of `name` that lives as long as the graph: the graph, not the nodes' messages, holds
  // the names of nodes and of the values they define.
  std::string_view KeepName(std::string_view name);
  // Initializer `value`'s tensor with its data dropped, before SetInitializerBytes gives it
  // `new_size` bytes; fails unless it is an initializer held in the model that needs that many.
  StatusOr<Tensor*> DropInitializerData(Value* value, size_t new_size);
  // AdoptAsOutput but for the type.
  void MoveDefinition(Node* node, Value* value);
  // SetValueType, with `record` (MakeTypeRecord of the value's name and `type`; null: made here)
  // as the value's value_info entry when it has none.
  void SetValueType(Value* value, const TensorType& type, onnx::ValueInfoProto* record);
  // Makes `record` the value_info entry of `value`, which has none, after the others.
  void AddTypeRecord(Value* value, onnx::ValueInfoProto* record);
  void LinkAtEnd(Node* node);
  void LinkBefore(Node* node, Node* anchor);
  void Unlink(Node* node);
  // Gives `node` an order key between its neighbours, relabelling a few neighbours when full.
  void AssignOrder(Node* node);
  void AddUse(Value* value, Node* node, int index);
  void RemoveUse(Value* value, Node* node, int index);
  // The positions of `value` among the graph outputs; O(1) for a value listed once.
  std::vector<size_t> OutputIndices(const Value* value);
  // Records that outputs_[index] is `value` in output_index_, once that is built.
  void NoteOutput(const Value* value, size_t index);
  Status ImportGraph(const ExternalDataResolver& resolve, GraphFeed& feed, LinkFollower* follower);

  // A value_info entry and the value it describes (null when it names no value of the graph: such
  // entries are kept as they were).
  struct TypedValue {
    onnx::ValueInfoProto* info;
    Value* value;
    // The value's `info_epoch_` when the entry was made: AdoptAsOutput retires older entries.
    uint32_t epoch = 0;
  };

  // The op contracts of the op types met so far, for Node::op_versions() and Node::contract(): a
  // graph has few distinct ops, so a scan of them is cheaper than a lookup among every contract
  // per node. A deque: nodes point at the entries' infos, which view the entries' names.
  // SetOpsetVersion re-picks the contracts of its domain's entries.
  struct KnownOp {
    KnownOp(std::string domain, std::string op_type)
        : domain(std::move(domain)), op_type(std::move(op_type)) {}
    KnownOp(const KnownOp&) = delete;
    KnownOp& operator=(const KnownOp&) = delete;
    std::string domain;
    std::string op_type;
    OpInfo info;
  };
  const KnownOp* FindKnownOp(std::string_view domain, std::string_view op_type) const;
  const OpInfo* OpInfoOf(std::string_view domain, std::string_view op_type);
  std::deque<KnownOp> known_ops_;

  std::unique_ptr<ProtoStore> store_;
  // Nodes, values and their edge lists grow in one region freed with the graph:
  // a million-node graph is then a few large allocations, not millions of small ones. Its blocks
  // come from `blocks_`, which faults their pages in ahead of a load (src/ir/graph_memory.h).
  std::unique_ptr<GraphMemory> blocks_;
  std::pmr::monotonic_buffer_resource memory_;
  std::pmr::deque<Node> node_pool_{&memory_};
  std::pmr::deque<Value> value_pool_{&memory_};
  std::deque<Tensor> tensor_pool_;
  NameIndex<Value> values_by_name_;
  NameIndex<Node> nodes_by_name_;
  std::vector<Value*> inputs_;
  std::vector<onnx::ValueInfoProto*> input_infos_;
  std::vector<Value*> outputs_;
  std::vector<onnx::ValueInfoProto*> output_infos_;
  // In file order; erased ones are skipped when read or written.
  std::vector<Value*> initializers_;
  // value_info entries in file order, then in the order passes typed values.
  std::vector<TypedValue> value_infos_;
  // output_index_[value id] = a position of the value in outputs_, or -1. Built on first need and
  // kept up to date by the edits of the outputs; checked before use, rebuilt when stale. A
  // training graph has an output per parameter and state, and a pass replacing or renaming each
  // of them must not scan the outputs every time.
  std::vector<int64_t> output_index_;
  // Looks names up by string_view: a pass naming each of a million new values "X_grad" must not
  // copy every base name into a temporary string to find its counter.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
  };
  using NameCounters = std::unordered_map<std::string, int64_t, NameHash, std::equal_to<>>;
  // Last suffix tried per base name by UniqueValueName and by UniqueNodeName.
  mutable NameCounters value_name_counters_;
  mutable NameCounters node_name_counters_;
  Node* first_ = nullptr;
  Node* last_ = nullptr;
  size_t num_nodes_ = 0;
  // Whether every node was linked after the pool's nodes before it, as loading links them and
  // until a pass moves or inserts one: the schedule is then the pool's order (ScheduledNodes).
  bool scheduled_in_pool_order_ = true;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_GRAPH_H_
