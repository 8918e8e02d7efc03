#ifndef ZEROGRAPH_IR_NODE_H_
#define ZEROGRAPH_IR_NODE_H_

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zerograph/ir/graph_key.h"
#include "zerograph/ir/op_role.h"

namespace onnx {
class AttributeProto;
class NodeProto;
}  // namespace onnx

namespace zerograph {

class Graph;
class Value;
struct OpContract;
// One op's contracts, oldest version first (zerograph/ir/op_contract.h).
using OpVersions = std::vector<OpContract>;

// What a graph knows of one op type: every version of its contract, and the one the graph's opset
// for the op's domain selects (the newest when the graph imports no opset for it; null when every
// version is newer than the graph's opset).
struct OpInfo {
  std::string_view domain;
  std::string_view op_type;
  const OpVersions* versions = nullptr;
  const OpContract* contract = nullptr;
  // The op's entry in OpContracts::optimizers(), or -1 when it is no optimizer: passes ask this
  // of every node of large graphs (FindOptimizerSignature).
  int optimizer = -1;
};

// ONNX's attribute kinds, numbered as AttributeProto.AttributeType.
enum class AttributeType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

// One operation in the schedule. Inputs and outputs are SSA edges; attributes of every ONNX kind
// are kept in their ONNX form (so a saved node is the loaded node), with typed accessors for the
// scalar and list kinds the passes use. Annotations (role, stream, bucket) are cached fields
// mirrored in `__`-prefixed attributes (a role set on a node without one, when the graph is
// saved). Nodes are owned by their Graph and edited only through it.
class Node {
 public:
  Node(GraphKey, std::pmr::memory_resource* memory)
      : inputs_(memory), input_uses_(memory), outputs_(memory) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Dense id, stable for the node's life; indexes side tables (`Graph::node_id_bound()`).
  int64_t id() const { return id_; }
  // True once the graph erased the node (its memory lives as long as the graph).
  bool erased() const { return erased_; }
  std::string_view name() const { return name_; }
  std::string_view op_type() const { return op_info_->op_type; }
  // "" is the default ONNX domain.
  std::string_view domain() const { return op_info_->domain; }
  // Every version of the node's op contract (zerograph/ir/op_contract.h), or null for an op
  // zerograph does not know; which version applies depends on the graph's opset.
  const OpVersions* op_versions() const { return op_info_->versions; }
  // The contract of the graph's opset version (see OpInfo), or null. Attribute defaults come
  // from it, since they change between versions (Softmax's axis, Dropout's ratio).
  const OpContract* contract() const { return op_info_->contract; }
  // The op's entry in OpContracts::optimizers() (see OpInfo), or -1.
  int optimizer_index() const { return op_info_->optimizer; }
  bool Is(std::string_view domain, std::string_view op_type) const {
    return this->domain() == domain && this->op_type() == op_type;
  }

  // Inputs in order; an omitted optional input is null.
  std::span<Value* const> inputs() const { return inputs_; }
  Value* input(size_t i) const { return inputs_[i]; }
  size_t num_inputs() const { return inputs_.size(); }
  // Where input i's use lies in its value's users(): a use is found from its edge in O(1).
  uint32_t input_use_index(size_t i) const { return input_uses_[i]; }
  std::span<Value* const> outputs() const { return outputs_; }
  Value* output(size_t i) const { return outputs_[i]; }
  size_t num_outputs() const { return outputs_.size(); }

  // Neighbours in schedule order; null at the ends.
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }
  // True when this node runs before `other` in the schedule. O(1).
  bool IsBefore(const Node& other) const { return order_ < other.order_; }
  // Grows along the schedule (IsBefore compares it) and changes when nodes are added or moved:
  // for sorting many nodes by position without reaching the nodes at every comparison.
  int64_t schedule_key() const { return order_; }

  // --- Annotations --------------------------------------------------------------------------
  // False when the node carries no `__op_role` and none was inferred.
  bool has_role() const { return role_bits_ >= 0; }
  OpRole role() const {
    return static_cast<OpRole>(role_bits_ < 0 ? 0 : role_bits_ & ~kLossRoleBit);
  }
  bool is_loss() const { return role_bits_ >= 0 && (role_bits_ & kLossRoleBit) != 0; }
  // The raw `__op_role` value (role | loss bit), or -1 when absent.
  int64_t role_bits() const { return role_bits_; }
  // On a node without `__op_role`, the role is written as that attribute when the graph is
  // saved, not before: the attribute accessors do not see it meanwhile.
  void SetRole(OpRole role, bool is_loss = false);

  // The stream this node runs on: kComputeStream unless annotated.
  std::string_view stream() const;
  void SetStream(std::string_view stream);

  // The fused bucket this node belongs to, or -1.
  int64_t bucket() const { return bucket_; }
  void SetBucket(int64_t bucket);

  // --- Attributes ---------------------------------------------------------------------------
  bool HasAttribute(std::string_view name) const { return FindAttribute(name) != nullptr; }
  // The kind of attribute `name`, or nullopt when absent.
  std::optional<AttributeType> GetAttributeType(std::string_view name) const;
  std::vector<std::string_view> AttributeNames() const;

  // Typed reads: nullopt when the attribute is absent or of another kind.
  std::optional<int64_t> GetInt(std::string_view name) const;
  std::optional<float> GetFloat(std::string_view name) const;
  std::optional<std::string_view> GetString(std::string_view name) const;
  std::optional<std::span<const int64_t>> GetInts(std::string_view name) const;
  std::optional<std::span<const float>> GetFloats(std::string_view name) const;
  std::optional<std::vector<std::string_view>> GetStrings(std::string_view name) const;

  // Typed writes: replace an attribute of the same name or append one.
  void SetInt(std::string_view name, int64_t value);
  void SetFloat(std::string_view name, float value);
  void SetString(std::string_view name, std::string_view value);
  void SetInts(std::string_view name, std::span<const int64_t> values);
  void SetFloats(std::string_view name, std::span<const float> values);
  void SetStrings(std::string_view name, std::span<const std::string> values);
  // Returns whether an attribute was removed.
  bool RemoveAttribute(std::string_view name);
  // Copies every attribute of `other` except annotations (`__`-prefixed), replacing same names.
  void CopyAttributesFrom(const Node& other);

  // The ONNX form of an attribute, for kinds without a typed accessor (tensors, graphs, types).
  const onnx::AttributeProto* FindAttribute(std::string_view name) const;

  // The node's ONNX message, without its name, inputs and outputs: the graph holds those, and
  // the writer writes them with the message (Graph::HeldFields).
  const onnx::NodeProto& proto() const { return *proto_; }

  // --- Contract check ------------------------------------------------------------------------
  // Whether the node passed the check against its op's contract (VerifyContracts, Verify) and
  // has not changed since: every edit of its inputs, outputs or attributes (annotations aside),
  // and a new contract for its op (Graph::SetOpsetVersion), clear it. The check reads only the
  // node, so Verify checks again only the nodes a pass made or edited: after a rewrite, a few
  // thousand of a million. Set by the checks, which read the node as const: it records what was
  // found, not a state of the node.
  bool contract_checked() const { return contract_checked_; }
  void MarkContractChecked() const { contract_checked_ = true; }

 private:
  friend class Graph;
  // An input or output was set, added or replaced.
  void NoteEdgesEdited() {
    lead_size_ = kLeadSizeUnknown;
    contract_checked_ = false;
  }
  onnx::AttributeProto* MutableAttribute(std::string_view name, AttributeType type);
  // Reads `__op_role`, `__execution_stream` and `__bucket` into the cached fields.
  void LoadAnnotations();

  template <typename>
  friend class NameIndex;

  int64_t id_ = -1;
  // The name's hash, kept by NameIndex while the node is in one.
  uint64_t name_hash_ = 0;
  onnx::NodeProto* proto_ = nullptr;
  // Held by the graph, as are its values' names (Graph::KeepName); never changes.
  std::string_view name_;
  // Owned by the graph; shared by every node of the op type, whose domain and op type it holds
  // (few, so they stay cached while passes test the op of every node). Never null.
  const OpInfo* op_info_ = nullptr;
  std::pmr::vector<Value*> inputs_;
  // Where input i's use sits in its value's user list, so that removing the use is O(1): values
  // such as the learning rate have a user per optimizer node, and erasing each of those nodes
  // must not search the list.
  std::pmr::vector<uint32_t> input_uses_;
  std::pmr::vector<Value*> outputs_;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  int64_t order_ = 0;
  int64_t role_bits_ = -1;
  int64_t bucket_ = -1;
  std::string_view stream_;
  // The size of the node's inputs, outputs and name in wire format, which the writer needs for
  // every node (Graph::HeldFields): known from loading, and unknown again after an edit of them.
  // Computing it reads every input's value, a cache miss each.
  static constexpr uint32_t kLeadSizeUnknown = UINT32_MAX;
  uint32_t lead_size_ = kLeadSizeUnknown;
  // Set when role_bits_ holds a role the proto lacks (SetRole).
  bool role_unwritten_ = false;
  // False only when the proto is known to have no `__op_role` attribute of any type (read by
  // LoadAnnotations), so that SetRole need not search the attributes: loading infers the roles
  // of every node of a graph without them, and the search is a cache miss per node.
  bool may_have_role_attr_ = true;
  bool erased_ = false;
  mutable bool contract_checked_ = false;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_NODE_H_
