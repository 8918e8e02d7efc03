#include "zerograph/ir/graph.h"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "ir/graph_memory.h"
#include "ir/node_proto_check.h"
#include "zerograph/ir/graph_feed.h"
#include "zerograph/ir/link_follower.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/proto_store.h"

namespace zerograph {
namespace {

// Order keys start this far apart, so that about 32 insertions at one point fit before any
// neighbour has to be relabelled.
constexpr int64_t kOrderSpacing = int64_t{1} << 32;

// Nodes to load from which faulting the graph's region in on another thread pays for the thread,
// and nodes linked between two reports of where the linking is (about 128 KiB of the region).
constexpr size_t kNodesPerWarmingThread = 10000;
constexpr int64_t kNodesPerWarmingStep = 256;

// Nodes from which another thread pays for its start in following the schedule's pieces.
constexpr size_t kNodesPerWalkingThread = 50000;

// Names looked up per task in a bulk search, and names from which a searching thread pays for its
// start.
constexpr size_t kNamesPerSearchSlice = 16384;
constexpr size_t kNamesPerSearchThread = 65536;

// out[i] = index.Find(names[i]) for every i. A search is a cache miss or two, and a bulk search
// (a training graph's outputs, a state binding) may look up every parameter and state: large ones
// are shared out in slices.
template <typename T>
void FindInSlices(const NameIndex<T>& index, std::span<const std::string_view> names,
                  std::span<T*> out) {
  const size_t slices = (names.size() + kNamesPerSearchSlice - 1) / kNamesPerSearchSlice;
  ParallelFor(slices, ThreadsFor(names.size(), kNamesPerSearchThread), [&](size_t s) {
    const size_t begin = s * kNamesPerSearchSlice;
    const size_t size = std::min(kNamesPerSearchSlice, names.size() - begin);
    index.FindMany(names.subspan(begin, size), out.subspan(begin, size));
    return Status::Ok();
  }).IgnoreError();  // the task cannot fail
}

// "node 'fc1' (MatMul)", or "node #12 (MatMul)" for an unnamed node.
std::string NodeLabel(const Node& node, int64_t index) {
  if (node.name().empty()) return StrCat("node #", index, " (", node.op_type(), ")");
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

template <typename T>
std::vector<T*> TakeAll(google::protobuf::RepeatedPtrField<T>* field) {
  std::vector<T*> items(static_cast<size_t>(field->size()));
  field->UnsafeArenaExtractSubrange(0, field->size(), items.data());
  return items;
}

template <typename T>
void ReleaseAll(google::protobuf::RepeatedPtrField<T>* field) {
  field->UnsafeArenaExtractSubrange(0, field->size(), nullptr);
}

void FillTypeProto(const TensorType& type, onnx::TypeProto* proto) {
  onnx::TypeProto::Tensor* tensor = proto->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(type.dtype));
  tensor->clear_shape();
  if (!type.dims) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : *type.dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

// `__op_role` = `bits` as a NodeProto field (tag, length, attribute): the attribute a node
// carrying its role holds.
std::string RoleField(int64_t bits) {
  onnx::NodeProto holder;
  onnx::AttributeProto* attr = holder.add_attribute();
  attr->set_name(std::string(kOpRoleAttr));
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(bits);
  return holder.SerializeAsString();
}

}  // namespace

Graph::Graph()
    : store_(std::make_unique<ProtoStore>()),
      blocks_(std::make_unique<GraphMemory>()),
      memory_(blocks_.get()) {
  store_->model->set_ir_version(8);
  store_->model->mutable_graph();
}

Graph::~Graph() = default;

// --- Reading ------------------------------------------------------------------------------------

StoredNodeRange Graph::stored_nodes(size_t part, size_t parts) const {
  // Const as nodes() is: the graph hands out its nodes for editing either way.
  auto& pool = const_cast<std::pmr::deque<Node>&>(node_pool_);
  const size_t size = pool.size();
  const auto begin = pool.begin() + static_cast<std::ptrdiff_t>(size * part / parts);
  const auto end = pool.begin() + static_cast<std::ptrdiff_t>(size * (part + 1) / parts);
  return {{begin, end}, {end, end}};
}

Value* Graph::FindValue(std::string_view name) const { return values_by_name_.Find(name); }

Node* Graph::FindNode(std::string_view name) const { return nodes_by_name_.Find(name); }

std::vector<Value*> Graph::FindValues(std::span<const std::string_view> names) const {
  std::vector<Value*> values(names.size());
  FindInSlices<Value>(values_by_name_, names, values);
  return values;
}

std::vector<Node*> Graph::FindNodes(std::span<const std::string_view> names) const {
  std::vector<Node*> nodes(names.size());
  FindInSlices<Node>(nodes_by_name_, names, nodes);
  return nodes;
}

std::vector<Node*> Graph::FindAsFiled(std::span<const Node* const> nodes) const {
  std::vector<Node*> found(nodes.size());
  nodes_by_name_.FindManyAsFiled(nodes, found);
  return found;
}

std::vector<Value*> Graph::FindAsFiled(std::span<const Value* const> values) const {
  std::vector<Value*> found(values.size());
  values_by_name_.FindManyAsFiled(values, found);
  return found;
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> alive;
  alive.reserve(initializers_.size());
  for (Value* value : initializers_) {
    if (!value->erased_ && value->initializer_ != nullptr) alive.push_back(value);
  }
  return alive;
}

// --- Building -----------------------------------------------------------------------------------

Value* Graph::NewValue(std::string_view name) {
  Value& value = value_pool_.emplace_back(GraphKey(), &memory_);
  value.id_ = static_cast<int64_t>(value_pool_.size()) - 1;
  value.name_ = name;
  return &value;
}

std::string_view Graph::KeepName(std::string_view name) {
  if (name.empty()) return {};
  auto* chars = static_cast<char*>(memory_.allocate(name.size(), 1));
  std::copy(name.begin(), name.end(), chars);
  return {chars, name.size()};
}

void Graph::AttachProto(Node* node, onnx::NodeProto* proto) {
  node->proto_ = proto;
  node->op_info_ = OpInfoOf(proto->domain(), proto->op_type());
}

const Graph::KnownOp* Graph::FindKnownOp(std::string_view domain, std::string_view op_type) const {
  for (const KnownOp& op : known_ops_) {
    if (op.op_type == op_type && op.domain == domain) return &op;
  }
  return nullptr;
}

const OpInfo* Graph::OpInfoOf(std::string_view domain, std::string_view op_type) {
  if (const KnownOp* known = FindKnownOp(domain, op_type)) return &known->info;
  const OpContracts& contracts = OpContracts::Get();
  const OpVersions* versions = contracts.FindOp(domain, op_type);
  const OpContract* contract =
      versions != nullptr ? OpContracts::PickVersion(*versions, OpsetVersion(domain)) : nullptr;
  const std::span<const OpContracts::Optimizer> optimizers = contracts.optimizers();
  const auto optimizer = std::find_if(optimizers.begin(), optimizers.end(), [&](const auto& o) {
    return o.domain == domain && o.name == op_type;
  });
  KnownOp& known = known_ops_.emplace_back(std::string(domain), std::string(op_type));
  known.info = {
      known.domain, known.op_type, versions, contract,
      optimizer != optimizers.end() ? static_cast<int>(optimizer - optimizers.begin()) : -1};
  return &known.info;
}

std::vector<std::string_view> Graph::OpDomains() const {
  std::vector<std::string_view> domains;
  for (const KnownOp& op : known_ops_) {
    if (std::find(domains.begin(), domains.end(), op.domain) == domains.end()) {
      domains.push_back(op.domain);
    }
  }
  return domains;
}

bool Graph::HasMetOp(std::string_view domain, std::string_view op_type) const {
  return FindKnownOp(domain, op_type) != nullptr;
}

Node* Graph::NewNode() {
  Node& node = node_pool_.emplace_back(GraphKey(), &memory_);
  node.id_ = static_cast<int64_t>(node_pool_.size()) - 1;
  return &node;
}

Value* Graph::AddInput(std::string_view name, const TensorType& type) {
  auto* info = store_->New<onnx::ValueInfoProto>();
  info->set_name(UniqueValueName(name));
  FillTypeProto(type, info->mutable_type());
  Value* value = NewValue(info->name());
  value->is_graph_input_ = true;
  value->info_ = info;
  values_by_name_.Insert(value);
  inputs_.push_back(value);
  input_infos_.push_back(info);
  return value;
}

Value* Graph::AddInitializer(std::string_view name, DataType dtype, std::span<const int64_t> dims,
                             std::span<const std::byte> bytes) {
  return AddInitializer(name, dtype, dims,
                        std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Value* Graph::AddInitializer(std::string_view name, DataType dtype, std::span<const int64_t> dims,
                             std::string&& raw_bytes) {
  auto* proto = store_->New<onnx::TensorProto>();
  proto->set_name(UniqueValueName(name));
  proto->set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : dims) proto->add_dims(d);
  proto->set_raw_data(std::move(raw_bytes));
  Tensor& tensor = tensor_pool_.emplace_back(GraphKey());
  const Status attached = tensor.Attach(proto);
  ZG_CHECK(attached.ok(), "initializer '", proto->name(), "': ", attached.message());
  Value* value = NewValue(proto->name());
  value->initializer_ = &tensor;
  values_by_name_.Insert(value);
  initializers_.push_back(value);
  return value;
}

StatusOr<Tensor*> Graph::DropInitializerData(Value* value, size_t new_size) {
  Tensor* tensor = value->initializer_;
  ZG_RET_CHECK(tensor != nullptr && !tensor->is_external(), "'", value->name(),
               "' is not an initializer held in the model");
  ZG_RET_CHECK(new_size == static_cast<size_t>(tensor->byte_size()), "initializer '", value->name(),
               "' needs ", tensor->byte_size(), " bytes, not ", new_size);
  onnx::TensorProto* proto = tensor->proto_;
  // Typed data would be read instead of (or besides) the new bytes.
  proto->clear_raw_data();
  proto->clear_float_data();
  proto->clear_int32_data();
  proto->clear_int64_data();
  proto->clear_double_data();
  proto->clear_uint64_data();
  tensor->fused_.reset();
  tensor->converted_valid_.store(false, std::memory_order_relaxed);
  tensor->converted_.clear();
  return tensor;
}

Status Graph::SetInitializerBytes(Value* value, std::string&& raw_bytes) {
  ZG_ASSIGN_OR_RETURN(Tensor * tensor, DropInitializerData(value, raw_bytes.size()));
  tensor->proto_->set_raw_data(std::move(raw_bytes));
  return Status::Ok();
}

Status Graph::SetInitializerBytes(Value* value, std::shared_ptr<const FusedBytes> fused) {
  ZG_ASSIGN_OR_RETURN(Tensor * tensor, DropInitializerData(value, fused->size()));
  tensor->fused_ = std::move(fused);
  return Status::Ok();
}

void Graph::AddOutput(Value* value) {
  auto* info = store_->New<onnx::ValueInfoProto>();
  info->set_name(std::string(value->name()));
  if (std::optional<TensorType> type = value->type()) FillTypeProto(*type, info->mutable_type());
  outputs_.push_back(value);
  output_infos_.push_back(info);
  ++value->graph_output_count_;
  NoteOutput(value, outputs_.size() - 1);
}

void Graph::SetOutput(size_t index, Value* value) {
  Value* old = outputs_[index];
  --old->graph_output_count_;
  auto* info = store_->New<onnx::ValueInfoProto>();
  info->set_name(std::string(value->name()));
  if (std::optional<TensorType> type = value->type()) {
    FillTypeProto(*type, info->mutable_type());
  } else {
    *info->mutable_type() = output_infos_[index]->type();
  }
  outputs_[index] = value;
  output_infos_[index] = info;
  ++value->graph_output_count_;
  NoteOutput(value, index);
}

void Graph::EraseOutputsIf(const std::function<bool(const Value*)>& drop) {
  size_t kept = 0;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (drop(outputs_[i])) {
      --outputs_[i]->graph_output_count_;
      continue;
    }
    outputs_[kept] = outputs_[i];
    output_infos_[kept] = output_infos_[i];
    ++kept;
  }
  outputs_.resize(kept);
  output_infos_.resize(kept);
  // Positions moved: rebuilt when next needed.
  output_index_.clear();
}

std::vector<size_t> Graph::OutputIndices(const Value* value) {
  if (value->graph_output_count_ == 0) return {};
  if (value->graph_output_count_ > 1) {
    // Listed more than once (rare): a scan.
    std::vector<size_t> indices;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (outputs_[i] == value) indices.push_back(i);
    }
    return indices;
  }
  const auto id = static_cast<size_t>(value->id_);
  auto valid = [&] {
    if (id >= output_index_.size() || output_index_[id] < 0) return false;
    const auto index = static_cast<size_t>(output_index_[id]);
    return index < outputs_.size() && outputs_[index] == value;
  };
  if (!valid()) {
    output_index_.assign(value_pool_.size(), -1);
    for (size_t i = outputs_.size(); i-- > 0;) {
      output_index_[static_cast<size_t>(outputs_[i]->id_)] = static_cast<int64_t>(i);
    }
    ZG_CHECK(valid(), "graph output '", value->name(), "' is not among the outputs");
  }
  return {static_cast<size_t>(output_index_[id])};
}

void Graph::NoteOutput(const Value* value, size_t index) {
  if (output_index_.empty()) return;  // not built yet
  const auto id = static_cast<size_t>(value->id_);
  if (id >= output_index_.size()) output_index_.resize(value_pool_.size(), -1);
  const int64_t known = output_index_[id];
  // Keep a position that still holds the value; otherwise this one.
  if (known < 0 || static_cast<size_t>(known) >= outputs_.size() ||
      outputs_[static_cast<size_t>(known)] != value) {
    output_index_[id] = static_cast<int64_t>(index);
  }
}

Node* Graph::AddNode(std::string_view op_type, std::string_view domain,
                     std::span<Value* const> inputs, std::span<const std::string> output_names,
                     std::string_view name, Node* before) {
  auto* proto = store_->New<onnx::NodeProto>();
  proto->set_op_type(std::string(op_type));
  proto->set_domain(std::string(domain));
  Node* node = NewNode();
  AttachProto(node, proto);
  if (!name.empty()) node->name_ = KeepName(UniqueNodeName(name));
  node->inputs_.assign(inputs.begin(), inputs.end());
  node->input_uses_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != nullptr) AddUse(inputs[i], node, static_cast<int>(i));
  }
  node->outputs_.reserve(output_names.size());
  for (size_t i = 0; i < output_names.size(); ++i) {
    Value* value = NewValue(KeepName(UniqueValueName(output_names[i])));
    value->producer_ = node;
    value->producer_output_index_ = static_cast<int>(i);
    values_by_name_.Insert(value);
    node->outputs_.push_back(value);
  }
  if (!node->name_.empty()) nodes_by_name_.Insert(node);
  if (before == nullptr) {
    LinkAtEnd(node);
  } else {
    LinkBefore(node, before);
  }
  ++num_nodes_;
  return node;
}

namespace {

// `base` with the first suffix past its counter ("base_1", "base_2", ...) that `taken` rejects.
template <typename Counters, typename Taken>
std::string UniqueName(std::string_view base, Taken taken, Counters& counters) {
  auto it = counters.find(base);
  if (it == counters.end()) it = counters.emplace(std::string(base), 0).first;
  std::string candidate;
  do {
    candidate = StrCat(base, "_", ++it->second);
  } while (taken(candidate));
  return candidate;
}

}  // namespace

std::string Graph::UniqueValueName(std::string_view base) const {
  if (FindValue(base) == nullptr) return std::string(base);
  return UniqueName(
      base, [&](std::string_view name) { return FindValue(name) != nullptr; },
      value_name_counters_);
}

std::string Graph::UniqueNodeName(std::string_view base) const {
  if (FindNode(base) == nullptr) return std::string(base);
  return UniqueName(
      base, [&](std::string_view name) { return FindNode(name) != nullptr; }, node_name_counters_);
}

void Graph::SetValueType(Value* value, const TensorType& type) {
  SetValueType(value, type, nullptr);
}

void Graph::SetValueType(Value* value, const TensorType& type, onnx::ValueInfoProto* record) {
  if (value->info_ == nullptr) {
    AddTypeRecord(value, record != nullptr ? record : MakeTypeRecord(value->name(), type));
  } else {
    FillTypeProto(type, value->info_->mutable_type());
  }
  for (size_t i : OutputIndices(value)) FillTypeProto(type, output_infos_[i]->mutable_type());
}

onnx::ValueInfoProto* Graph::MakeTypeRecord(std::string_view name, const TensorType& type) {
  auto* info = store_->New<onnx::ValueInfoProto>();
  info->set_name(std::string(name));
  FillTypeProto(type, info->mutable_type());
  return info;
}

void Graph::AddTypeRecord(Value* value, onnx::ValueInfoProto* record) {
  value->info_ = record;
  if (!value->is_graph_input_) value_infos_.push_back({record, value, value->info_epoch_});
}

void Graph::SetDimParam(Value* value, size_t axis, std::string_view symbol) {
  ZG_CHECK(value->info_ != nullptr, "value '", value->name(), "' has no recorded type to name");
  auto name_dim = [&](onnx::ValueInfoProto* info) {
    onnx::TensorShapeProto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
    ZG_CHECK(axis < static_cast<size_t>(shape->dim_size()), "value '", value->name(),
             "' has no dim ", axis);
    shape->mutable_dim(static_cast<int>(axis))->set_dim_param(std::string(symbol));
  };
  name_dim(value->info_);
  for (size_t i : OutputIndices(value)) name_dim(output_infos_[i]);
}

// --- Editing ------------------------------------------------------------------------------------

void Graph::AddUse(Value* value, Node* node, int index) {
  node->input_uses_[static_cast<size_t>(index)] = static_cast<uint32_t>(value->users_.size());
  value->users_.push_back({node, index});
}

void Graph::RemoveUse(Value* value, Node* node, int index) {
  std::pmr::vector<Use>& users = value->users_;
  const uint32_t position = node->input_uses_[static_cast<size_t>(index)];
  ZG_CHECK(position < users.size() && users[position] == (Use{node, index}), "value '",
           value->name(), "' has no use by input ", index);
  // The last use fills the hole; its node learns its new position.
  const Use moved = users.back();
  users[position] = moved;
  moved.node->input_uses_[static_cast<size_t>(moved.input_index)] = position;
  users.pop_back();
}

void Graph::SetInput(Node* node, size_t index, Value* value) {
  Value* old = node->inputs_[index];
  if (old == value) return;
  if (old != nullptr) RemoveUse(old, node, static_cast<int>(index));
  node->inputs_[index] = value;
  node->NoteEdgesEdited();
  if (value != nullptr) AddUse(value, node, static_cast<int>(index));
}

void Graph::AppendInput(Node* node, Value* value) {
  node->inputs_.push_back(value);
  node->input_uses_.push_back(0);
  node->NoteEdgesEdited();
  if (value != nullptr) AddUse(value, node, static_cast<int>(node->inputs_.size()) - 1);
}

bool Graph::RenameValue(Value* value, std::string_view name) {
  if (value->producer_ == nullptr || FindValue(name) != nullptr) return false;
  values_by_name_.Erase(value);
  value->name_ = KeepName(name);
  values_by_name_.Insert(value);
  value->producer_->lead_size_ = Node::kLeadSizeUnknown;
  for (const Use& use : value->users_) use.node->lead_size_ = Node::kLeadSizeUnknown;
  if (value->info_ != nullptr) value->info_->set_name(std::string(name));
  for (size_t i : OutputIndices(value)) output_infos_[i]->set_name(std::string(name));
  return true;
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  for (const Use& use : from->users_) {
    use.node->inputs_[use.input_index] = to;
    use.node->NoteEdgesEdited();
    AddUse(to, use.node, use.input_index);
  }
  from->users_.clear();
  for (size_t i : OutputIndices(from)) SetOutput(i, to);
}

void Graph::AdoptAsOutput(Node* node, Value* value, const TensorType& type) {
  AdoptAsOutput(node, value, type, nullptr);
}

void Graph::AdoptAsOutput(Node* node, Value* value, const TensorType& type,
                          onnx::ValueInfoProto* record) {
  MoveDefinition(node, value);
  SetValueType(value, type, record);
}

void Graph::AdoptAsOutput(Node* node, Value* value) {
  ZG_CHECK(value->info_ != nullptr, "value '", value->name(), "' has no recorded type to keep");
  MoveDefinition(node, value);
}

void Graph::MoveDefinition(Node* node, Value* value) {
  ZG_CHECK(!value->is_graph_input_, "graph input '", value->name(), "' cannot become an output");
  // The name stays where it is (an initializer's message is kept, though no longer written).
  if (Node* old = value->producer_) {
    old->outputs_[static_cast<size_t>(value->producer_output_index_)] = nullptr;
    old->NoteEdgesEdited();
  }
  node->NoteEdgesEdited();
  value->initializer_ = nullptr;
  value->producer_ = node;
  value->producer_output_index_ = static_cast<int>(node->outputs_.size());
  node->outputs_.push_back(value);
  // As for a new value, the value_info entry comes after those of the values defined before.
  // Its message is kept (a pass adopts a value per parameter): the entry is listed again at the
  // end, its old place retired.
  ++value->info_epoch_;
  if (value->info_ != nullptr) value_infos_.push_back({value->info_, value, value->info_epoch_});
}

void Graph::LinkAtEnd(Node* node) {
  if (last_ != nullptr && last_->id_ > node->id_) scheduled_in_pool_order_ = false;
  node->prev_ = last_;
  node->next_ = nullptr;
  if (last_ != nullptr) {
    last_->next_ = node;
  } else {
    first_ = node;
  }
  last_ = node;
  AssignOrder(node);
}

void Graph::LinkBefore(Node* node, Node* anchor) {
  scheduled_in_pool_order_ = false;
  node->next_ = anchor;
  node->prev_ = anchor->prev_;
  if (anchor->prev_ != nullptr) {
    anchor->prev_->next_ = node;
  } else {
    first_ = node;
  }
  anchor->prev_ = node;
  AssignOrder(node);
}

void Graph::Unlink(Node* node) {
  if (node->prev_ != nullptr) {
    node->prev_->next_ = node->next_;
  } else {
    first_ = node->next_;
  }
  if (node->next_ != nullptr) {
    node->next_->prev_ = node->prev_;
  } else {
    last_ = node->prev_;
  }
  node->prev_ = node->next_ = nullptr;
}

// Order keys make "is before" a comparison. A new node takes the midpoint of its neighbours' keys;
// when they are adjacent, the run of nodes after it is widened until its key range is sparse
// (more than 2·(n+1)² keys for n nodes) and relabelled evenly, so repeated insertion at one point
// relabels ever larger but ever rarer runs.
void Graph::AssignOrder(Node* node) {
  const int64_t low = node->prev_ != nullptr ? node->prev_->order_ : 0;
  if (node->next_ == nullptr) {
    node->order_ = low + kOrderSpacing;
    return;
  }
  if (node->next_->order_ - low > 1) {
    node->order_ = low + (node->next_->order_ - low) / 2;
    return;
  }
  int64_t count = 1;
  Node* end = node->next_;
  while (end != nullptr && end->order_ - low <= 2 * (count + 1) * (count + 1)) {
    end = end->next_;
    ++count;
  }
  const int64_t step = end == nullptr ? kOrderSpacing : (end->order_ - low) / (count + 1);
  int64_t key = low;
  for (Node* n = node; n != end; n = n->next_) {
    key += step;
    n->order_ = key;
  }
}

// A large graph's nodes lie apart, among their edge lists and names, and passes move nodes.
// Until a node is moved or inserted, the pool holds the schedule in order: reading it in memory
// order beats any walk of the links (1M nodes: 17 against 25 ms), and with no node erased only
// the pool's addresses are read (2 ms). After, the schedule is cut at nodes picked from the pool
// by position and sorted by order key, and the pieces are followed several at a time, their
// misses overlapping, in groups shared out to threads. On a graph whose links or keys disagree
// (Verify refuses it) the pool or the pieces do not add up to the node count, and the links
// alone decide.
std::vector<Node*> Graph::ScheduledNodes() const {
  // Const as nodes() is: the graph hands out its nodes for editing either way.
  auto& pool = const_cast<std::pmr::deque<Node>&>(node_pool_);
  if (scheduled_in_pool_order_) {
    std::vector<Node*> nodes;
    nodes.reserve(num_nodes_);
    if (pool.size() == num_nodes_) {  // none erased: no node needs to be read
      for (Node& node : pool) nodes.push_back(&node);
    } else {
      for (Node* node : stored_nodes()) nodes.push_back(node);
    }
    if (nodes.size() == num_nodes_) return nodes;
  }
  constexpr size_t kPieceNodes = 2048;  // about, between the picks
  constexpr size_t kCursors = 8;        // pieces followed at once
  std::vector<Node*> starts;
  if (first_ != nullptr) starts.push_back(first_);
  for (size_t i = kPieceNodes; i < pool.size(); i += kPieceNodes) {
    Node* node = &pool[i];
    if (!node->erased_ && node != first_) starts.push_back(node);
  }
  std::sort(starts.begin(), starts.end(),
            [](const Node* a, const Node* b) { return a->IsBefore(*b); });

  // Groups of pieces are independent. A group that finds more nodes than the graph has is on
  // links that loop, and stops.
  std::vector<std::vector<Node*>> pieces(starts.size());
  const size_t groups = (starts.size() + kCursors - 1) / kCursors;
  std::vector<size_t> found_in_group(groups, 0);
  const Status walked =
      ParallelFor(groups, ThreadsFor(num_nodes_, kNodesPerWalkingThread), [&](size_t g) {
        const size_t group = g * kCursors;
        const size_t end = std::min(group + kCursors, starts.size());
        std::array<Node*, kCursors> cursors{};
        for (size_t j = group; j < end; ++j) {
          cursors[j - group] = starts[j];
          pieces[j].reserve(2 * kPieceNodes);
        }
        size_t found = 0;
        for (bool moving = true; moving && found <= num_nodes_;) {
          moving = false;
          for (size_t j = group; j < end; ++j) {
            Node*& cursor = cursors[j - group];
            if (cursor == nullptr || (j + 1 < starts.size() && cursor == starts[j + 1])) continue;
            pieces[j].push_back(cursor);
            cursor = cursor->next_;
            ++found;
            moving = true;
          }
        }
        found_in_group[g] = found;
        return Status::Ok();
      });
  size_t found = 0;
  for (const size_t count : found_in_group) found += count;
  std::vector<Node*> nodes;
  nodes.reserve(num_nodes_);
  if (walked.ok() && found == num_nodes_ && starts.front() == first_) {
    for (const std::vector<Node*>& piece : pieces)
      nodes.insert(nodes.end(), piece.begin(), piece.end());
  } else {
    for (Node* node = first_; node != nullptr; node = node->next_) nodes.push_back(node);
  }
  return nodes;
}

void Graph::MoveBefore(Node* node, Node* anchor) {
  if (node == anchor) return;
  Unlink(node);
  LinkBefore(node, anchor);
}

void Graph::MoveAfter(Node* node, Node* anchor) {
  if (node == anchor) return;
  Unlink(node);
  if (anchor->next_ == nullptr) {
    LinkAtEnd(node);
  } else {
    LinkBefore(node, anchor->next_);
  }
}

Status Graph::EraseNode(Node* node) {
  for (Value* output : node->outputs_) {
    if (output == nullptr) continue;
    ZG_RET_CHECK(output->users_.empty() && output->graph_output_count_ == 0, "cannot erase node '",
                 node->name(), "': its output '", output->name(), "' is still read");
  }
  // Each input's value and its use are a cache miss each on a large graph, and an optimizer node
  // over every parameter has hundreds of thousands of inputs: fetched a few inputs ahead, the
  // misses overlap.
  const std::span<Value* const> inputs = node->inputs_;
  constexpr size_t kAhead = 4;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i + 2 * kAhead < inputs.size()) __builtin_prefetch(inputs[i + 2 * kAhead]);
    if (const Value* ahead = i + kAhead < inputs.size() ? inputs[i + kAhead] : nullptr) {
      __builtin_prefetch(ahead->users_.data() + node->input_uses_[i + kAhead]);
    }
    if (inputs[i] != nullptr) RemoveUse(inputs[i], node, static_cast<int>(i));
  }
  for (Value* output : node->outputs_) {
    if (output == nullptr) continue;
    output->erased_ = true;
    values_by_name_.Erase(output);
  }
  if (!node->name().empty()) nodes_by_name_.Erase(node);
  Unlink(node);
  node->erased_ = true;
  --num_nodes_;
  return Status::Ok();
}

Status Graph::EraseInitializers(std::span<Value* const> values) {
  // A value and its slot in the name index are a cache miss each on a large graph, where a pass
  // may erase a state per parameter: fetched a few values ahead, the misses overlap.
  constexpr size_t kAhead = 4;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i + 2 * kAhead < values.size()) __builtin_prefetch(values[i + 2 * kAhead]);
    if (i + kAhead < values.size()) values_by_name_.PrefetchSlotOf(values[i + kAhead]);
    Value* value = values[i];
    ZG_RET_CHECK(value->initializer_ != nullptr, "'", value->name(), "' is not an initializer");
    ZG_RET_CHECK(value->users_.empty() && value->graph_output_count_ == 0,
                 "cannot erase initializer '", value->name(), "': it is still read");
    value->erased_ = true;
    values_by_name_.Erase(value);
  }
  return Status::Ok();
}

// --- Model-level data ---------------------------------------------------------------------------

int64_t Graph::ir_version() const { return store_->model->ir_version(); }

void Graph::SetIrVersion(int64_t version) { store_->model->set_ir_version(version); }

std::string_view Graph::name() const { return store_->model->graph().name(); }

void Graph::SetName(std::string_view name) {
  store_->model->mutable_graph()->set_name(std::string(name));
}

std::optional<int64_t> Graph::OpsetVersion(std::string_view domain) const {
  const bool is_default = domain.empty() || domain == "ai.onnx";
  for (const onnx::OperatorSetIdProto& opset : store_->model->opset_import()) {
    const bool matches = is_default ? (opset.domain().empty() || opset.domain() == "ai.onnx")
                                    : opset.domain() == domain;
    if (matches) return opset.version();
  }
  return std::nullopt;
}

void Graph::SetOpsetVersion(std::string_view domain, int64_t version) {
  std::vector<const OpInfo*> recontracted;
  for (KnownOp& op : known_ops_) {
    if (op.info.versions != nullptr && NormalizeDomain(op.domain) == NormalizeDomain(domain)) {
      const OpContract* contract = OpContracts::PickVersion(*op.info.versions, version);
      if (contract != op.info.contract) recontracted.push_back(&op.info);
      op.info.contract = contract;
    }
  }
  // Their nodes were checked against another contract (rare: a pass sets the version it found).
  if (!recontracted.empty()) {
    for (Node* node : stored_nodes()) {
      if (std::find(recontracted.begin(), recontracted.end(), node->op_info_) !=
          recontracted.end()) {
        node->contract_checked_ = false;
      }
    }
  }
  for (onnx::OperatorSetIdProto& opset : *store_->model->mutable_opset_import()) {
    if (opset.domain() == domain) {
      opset.set_version(version);
      return;
    }
  }
  onnx::OperatorSetIdProto* opset = store_->model->add_opset_import();
  opset->set_domain(std::string(domain));
  opset->set_version(version);
}

std::optional<std::string_view> Graph::GetMetadata(std::string_view key) const {
  for (const onnx::StringStringEntryProto& entry : store_->model->metadata_props()) {
    if (entry.key() == key) return std::string_view(entry.value());
  }
  return std::nullopt;
}

void Graph::SetMetadata(std::string_view key, std::string_view value) {
  for (onnx::StringStringEntryProto& entry : *store_->model->mutable_metadata_props()) {
    if (entry.key() == key) {
      entry.set_value(std::string(value));
      return;
    }
  }
  onnx::StringStringEntryProto* entry = store_->model->add_metadata_props();
  entry->set_key(std::string(key));
  entry->set_value(std::string(value));
}

std::vector<std::pair<std::string_view, std::string_view>> Graph::metadata() const {
  std::vector<std::pair<std::string_view, std::string_view>> entries;
  for (const onnx::StringStringEntryProto& entry : store_->model->metadata_props()) {
    entries.emplace_back(entry.key(), entry.value());
  }
  return entries;
}

// --- ONNX form ----------------------------------------------------------------------------------

void AppendNamesOf(std::span<onnx::NodeProto* const> messages, NodeNameList& names) {
  for (const onnx::NodeProto* node : messages) {
    names.nodes.push_back({node->name(), static_cast<uint32_t>(node->input_size()),
                           static_cast<uint32_t>(node->output_size())});
    for (const std::string& name : node->input()) names.values.push_back(name);
    for (const std::string& name : node->output()) names.values.push_back(name);
  }
}

void Graph::HeldFields::AddTo(size_t index, onnx::NodeProto& node) const {
  std::string fields(LeadSize(index), '\0');
  WriteLead(index, reinterpret_cast<uint8_t*>(fields.data()));
  const std::span<const std::byte> appendix = Appendix(index);
  fields.append(reinterpret_cast<const char*>(appendix.data()), appendix.size());
  ZG_CHECK(node.MergeFromString(fields), "node ", index, ": its fields do not parse");
}

namespace {

// NodeProto's fields the graph holds, as tags of length-delimited fields.
constexpr uint8_t kInputTag = (1 << 3) | 2;
constexpr uint8_t kOutputTag = (2 << 3) | 2;
constexpr uint8_t kNameTag = (3 << 3) | 2;

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  for (; value >= 0x80; value >>= 7) ++size;
  return size;
}

size_t NameFieldSize(std::string_view name) { return 1 + VarintSize(name.size()) + name.size(); }

uint8_t* WriteNameField(uint8_t tag, std::string_view name, uint8_t* out) {
  *out++ = tag;
  uint64_t size = name.size();
  for (; size >= 0x80; size >>= 7) *out++ = static_cast<uint8_t>((size & 0x7f) | 0x80);
  *out++ = static_cast<uint8_t>(size);
  return std::copy(name.begin(), name.end(), out);
}

std::string_view NameOf(const Value* value) { return value == nullptr ? "" : value->name(); }

// What Node::lead_size_ caches.
size_t LeadSizeOf(const Node& node) {
  size_t size = node.name().empty() ? 0 : NameFieldSize(node.name());
  for (const Value* input : node.inputs()) size += NameFieldSize(NameOf(input));
  for (const Value* output : node.outputs()) size += NameFieldSize(NameOf(output));
  return size;
}

// The graph's HeldFields: names from the IR's nodes and values, roles from a table of the few
// distinct ones.
//
// A node's inputs are values defined anywhere in the graph, a cache miss each: the writer asks
// for nodes in order (a chunk per thread), so the names of nodes a few places ahead, and of names
// a few places ahead in a long list (an optimizer over every parameter), are fetched meanwhile.
class IrHeldFields final : public Graph::HeldFields {
 public:
  // `nodes` in the model's order with their lead sizes; `role_field_of` is, per node, an index
  // into `role_fields` (1-based; 0: none; empty when no node has an unwritten role).
  // `fused` holds, per initializer in the model's order, its FusedBytes or null (empty when there
  // are none).
  IrHeldFields(std::vector<Node*> nodes, std::vector<uint32_t> lead_sizes,
               std::vector<std::string> role_fields, std::vector<uint32_t> role_field_of,
               std::vector<const FusedBytes*> fused)
      : nodes_(std::move(nodes)),
        lead_sizes_(std::move(lead_sizes)),
        role_fields_(std::move(role_fields)),
        role_field_of_(std::move(role_field_of)),
        fused_(std::move(fused)) {}

  size_t LeadSize(size_t index) const override { return lead_sizes_[index]; }
  uint8_t* WriteLead(size_t index, uint8_t* out) const override {
    FetchAhead(index);
    const Node& node = *nodes_[index];
    const std::span<Value* const> lists[] = {node.inputs(), node.outputs()};
    const uint8_t tags[] = {kInputTag, kOutputTag};
    for (int l = 0; l < 2; ++l) {
      const std::span<Value* const> values = lists[l];
      for (size_t k = 0; k < values.size(); ++k) {
        // A name's characters are fetched once its value has come.
        if (k + 2 * kNamesAhead < values.size())
          Fetch(values[k + 2 * kNamesAhead], /*chars=*/false);
        if (k + kNamesAhead < values.size()) Fetch(values[k + kNamesAhead], /*chars=*/true);
        out = WriteNameField(tags[l], NameOf(values[k]), out);
      }
    }
    if (!node.name().empty()) out = WriteNameField(kNameTag, node.name(), out);
    return out;
  }
  std::span<const std::byte> Appendix(size_t index) const override {
    if (role_field_of_.empty() || role_field_of_[index] == 0) return {};
    return std::as_bytes(std::span(role_fields_[role_field_of_[index] - 1]));
  }
  const FusedBytes* FusedInitializer(size_t index) const override {
    return fused_.empty() ? nullptr : fused_[index];
  }

 private:
  static constexpr size_t kNodesAhead = 4;
  static constexpr size_t kNamesAhead = 16;

  // Fetches `value`, or with `chars` (once it has been fetched) its name's characters.
  static void Fetch(const Value* value, bool chars) {
    if (value == nullptr) return;
    __builtin_prefetch(chars ? static_cast<const void*>(value->name().data()) : value);
  }

  // Fetches the values of the first names of the node kNodesAhead places on, and the characters
  // of those of the node half as far (whose values were fetched two nodes ago).
  void FetchAhead(size_t index) const {
    for (const size_t ahead : {index + kNodesAhead, index + kNodesAhead / 2}) {
      if (ahead >= nodes_.size()) continue;
      const bool chars = ahead != index + kNodesAhead;
      const Node& node = *nodes_[ahead];
      for (size_t k = 0; k < std::min(node.num_inputs(), kNamesAhead); ++k) {
        Fetch(node.input(k), chars);
      }
      for (size_t k = 0; k < std::min(node.num_outputs(), kNamesAhead); ++k) {
        Fetch(node.output(k), chars);
      }
    }
  }

  std::vector<Node*> nodes_;
  std::vector<uint32_t> lead_sizes_;
  std::vector<std::string> role_fields_;
  std::vector<uint32_t> role_field_of_;
  std::vector<const FusedBytes*> fused_;
};

// The main graph of a model parsed in full.
class ParsedGraph final : public GraphFeed {
 public:
  explicit ParsedGraph(std::vector<onnx::NodeProto*> nodes) : nodes_(std::move(nodes)) {}
  size_t num_nodes() const override { return nodes_.size(); }
  Status AwaitSources() override { return Status::Ok(); }
  StatusOr<std::span<onnx::NodeProto* const>> AwaitNodes(size_t) override {
    return std::span<onnx::NodeProto* const>(nodes_);
  }
  void ReadNames(size_t begin, size_t end, NodeNameList& names) const override {
    AppendNamesOf(std::span(nodes_).subspan(begin, end - begin), names);
  }
  Status AwaitRest() override { return Status::Ok(); }
  void Stop() override {}

 private:
  std::vector<onnx::NodeProto*> nodes_;
};

}  // namespace

StatusOr<std::unique_ptr<Graph>> Graph::FromModelProto(std::unique_ptr<ProtoStore> store,
                                                       const ExternalDataResolver& resolve,
                                                       GraphFeed* feed, LinkFollower* follower) {
  auto graph = std::make_unique<Graph>();
  graph->store_ = std::move(store);
  std::optional<ParsedGraph> parsed;
  if (feed == nullptr) {
    feed = &parsed.emplace(TakeAll(graph->store_->model->mutable_graph()->mutable_node()));
  }
  const Status status = graph->ImportGraph(resolve, *feed, follower);
  // The parser writes into the store's arena, and the follower reads the nodes: both must stop
  // before a failed graph frees them.
  feed->Stop();
  if (!status.ok() && follower != nullptr) follower->Stop();
  ZG_RETURN_IF_ERROR(status);
  return graph;
}

Status Graph::ImportGraph(const ExternalDataResolver& resolve, GraphFeed& feed,
                          LinkFollower* follower) {
  onnx::GraphProto* proto = store_->model->mutable_graph();
  ZG_RETURN_IF_ERROR(feed.AwaitSources());
  std::vector<onnx::TensorProto*> initializers = TakeAll(proto->mutable_initializer());
  std::vector<onnx::ValueInfoProto*> inputs = TakeAll(proto->mutable_input());

  // Sized up front so that the indexes rarely grow while loading. The nodes' outputs are not
  // counted, as most nodes are not parsed yet: two per node covers training graphs (optimizer
  // updates have three, most nodes one).
  values_by_name_.Reserve(initializers.size() + inputs.size() +
                          static_cast<size_t>(proto->sparse_initializer_size()) +
                          2 * feed.num_nodes());
  nodes_by_name_.Reserve(feed.num_nodes());

  auto define = [&](Value* value, std::string_view what, uint64_t hash) -> Status {
    const bool inserted = values_by_name_.Insert(value, hash).second;
    ZG_RETURN_IF_NOT(inserted, "value '", value->name(), "' is defined twice (", what,
                     "); SSA allows one definition per name");
    return Status::Ok();
  };

  // Names are hashed up front so that each index slot can be prefetched a few initializers ahead
  // (PrefetchAhead); a graph may have hundreds of thousands of initializers.
  std::vector<uint64_t> initializer_hashes;
  initializer_hashes.reserve(initializers.size());
  for (const onnx::TensorProto* tensor_proto : initializers) {
    initializer_hashes.push_back(NameIndex<Value>::Hash(tensor_proto->name()));
  }
  for (size_t i = 0; i < initializers.size(); ++i) {
    values_by_name_.PrefetchAhead(initializer_hashes, i);
    onnx::TensorProto* tensor_proto = initializers[i];
    ZG_RETURN_IF_NOT(!tensor_proto->name().empty(), "an initializer has no name");
    Tensor& tensor = tensor_pool_.emplace_back(GraphKey());
    if (Status attached = tensor.Attach(tensor_proto); !attached.ok()) {
      return std::move(attached).WithContext(StrCat("initializer '", tensor_proto->name(), "'"));
    }
    ZG_RETURN_IF_NOT(tensor.dtype() != DataType::kUndefined, "initializer '", tensor_proto->name(),
                     "' has unknown element type ", tensor_proto->data_type());
    if (tensor_proto->data_location() == onnx::TensorProto::EXTERNAL) {
      ZG_RET_CHECK(resolve != nullptr, "no resolver for external data");
      StatusOr<ExternalBytes> bytes = resolve(*tensor_proto);
      if (!bytes.ok()) {
        return std::move(bytes).status().WithContext(
            StrCat("initializer '", tensor_proto->name(), "'"));
      }
      tensor.external_file_ = std::move(bytes->file);
      tensor.external_bytes_ = bytes->bytes;
    } else if (tensor_proto->has_raw_data()) {
      const size_t element_size = ElementSize(tensor.dtype());
      ZG_RETURN_IF_NOT(element_size == 0 || tensor_proto->raw_data().size() ==
                                                static_cast<size_t>(tensor.numel()) * element_size,
                       "initializer '", tensor_proto->name(), "' holds ",
                       tensor_proto->raw_data().size(), " bytes, but its shape and type need ",
                       tensor.numel() * static_cast<int64_t>(element_size));
    }
    Value* value = NewValue(tensor_proto->name());
    value->initializer_ = &tensor;
    ZG_RETURN_IF_ERROR(define(value, "as an initializer", initializer_hashes[i]));
    initializers_.push_back(value);
  }
  for (const onnx::SparseTensorProto& sparse : proto->sparse_initializer()) {
    // Sparse initializers stay in the message as they are; their names are defined values.
    Value* value = NewValue(sparse.values().name());
    ZG_RETURN_IF_ERROR(
        define(value, "as a sparse initializer", NameIndex<Value>::Hash(value->name())));
  }
  for (onnx::ValueInfoProto* info : inputs) {
    Value* value = FindValue(info->name());
    if (value == nullptr || value->initializer_ == nullptr) {
      // Before IR 4 initializers were listed among the inputs too; otherwise an input is new.
      value = NewValue(info->name());
      ZG_RETURN_IF_ERROR(define(value, "as a graph input", NameIndex<Value>::Hash(value->name())));
    }
    ZG_RETURN_IF_NOT(!value->is_graph_input_, "graph input '", info->name(), "' is listed twice");
    value->is_graph_input_ = true;
    value->info_ = info;
    inputs_.push_back(value);
    input_infos_.push_back(info);
  }

  struct PendingInput {
    Node* node;
    int64_t index;
    std::string name;
  };
  std::vector<PendingInput> undefined;
  // A large graph's region is faulted in ahead of the linking below on a thread of its own
  // (GraphMemory): the first touches of its pages were a fifth of this thread's time.
  struct StopWarming {
    GraphMemory& memory;
    ~StopWarming() { memory.StopWarming(); }
  } stop_warming{*blocks_};
  const bool warming =
      ThreadsFor(feed.num_nodes(), kNodesPerWarmingThread) > 1 && blocks_->StartWarming();
  // Nodes are imported a chunk at a time: first every name of the chunk is hashed, then the
  // nodes are linked with each index search prepared a few searches ahead (PrefetchAhead). The
  // names are still cached when compared, and the index's cache misses overlap.
  NodeNameList names;
  std::vector<uint64_t> node_hashes;
  std::vector<uint64_t> value_hashes;  // as names.values
  std::vector<Node*> linked;           // the chunk's, for the follower
  int64_t node_index = 0;
  for (size_t chunk = 0; chunk < feed.num_nodes(); chunk += NameIndex<Node>::kBulkChunk) {
    const size_t chunk_size = std::min(NameIndex<Node>::kBulkChunk, feed.num_nodes() - chunk);
    ZG_ASSIGN_OR_RETURN(std::span<onnx::NodeProto* const> parsed,
                        feed.AwaitNodes(chunk + chunk_size));
    const std::span<onnx::NodeProto* const> chunk_nodes = parsed.subspan(chunk, chunk_size);
    names.clear();
    feed.ReadNames(chunk, chunk + chunk_size, names);
    node_hashes.clear();
    value_hashes.clear();
    for (const NodeNameList::Entry& entry : names.nodes) {
      node_hashes.push_back(NameIndex<Node>::Hash(entry.name));
    }
    for (const std::string_view name : names.values) {
      value_hashes.push_back(NameIndex<Value>::Hash(name));
    }
    size_t next_name = 0;  // in names.values
    linked.clear();
    for (size_t k = 0; k < chunk_nodes.size(); ++k) {
      onnx::NodeProto* node_proto = chunk_nodes[k];
      const NodeNameList::Entry& entry = names.nodes[k];
      nodes_by_name_.PrefetchAhead(node_hashes, k);
      Node* node = NewNode();
      linked.push_back(node);
      AttachProto(node, node_proto);
      node->name_ = KeepName(entry.name);
      LinkAtEnd(node);
      ++num_nodes_;
      if (!entry.name.empty()) {
        const bool inserted = nodes_by_name_.Insert(node, node_hashes[k]).second;
        ZG_RETURN_IF_NOT(inserted, NodeLabel(*node, node_index),
                         ": node name used twice; node names must be unique");
      }
      node->inputs_.resize(entry.num_inputs);
      node->input_uses_.resize(entry.num_inputs);
      size_t lead_size = entry.name.empty() ? 0 : NameFieldSize(entry.name);
      for (uint32_t i = 0; i < entry.num_inputs; ++i) {
        values_by_name_.PrefetchAhead(value_hashes, next_name);
        const uint64_t hash = value_hashes[next_name];
        const std::string_view name = names.values[next_name++];
        lead_size += NameFieldSize(name);
        if (name.empty()) continue;
        Value* input = values_by_name_.Find(name, hash);
        if (input == nullptr) {
          undefined.push_back({node, node_index, std::string(name)});
          continue;
        }
        node->inputs_[i] = input;
        AddUse(input, node, static_cast<int>(i));
      }
      node->outputs_.resize(entry.num_outputs);
      for (uint32_t i = 0; i < entry.num_outputs; ++i) {
        values_by_name_.PrefetchAhead(value_hashes, next_name);
        const uint64_t hash = value_hashes[next_name];
        const std::string_view name = names.values[next_name++];
        lead_size += NameFieldSize(name);
        if (name.empty()) continue;
        Value* value = NewValue(KeepName(name));
        value->producer_ = node;
        value->producer_output_index_ = static_cast<int>(i);
        auto [holder, inserted] = values_by_name_.Insert(value, hash);
        if (!inserted) {
          Node* first = holder->producer_;
          return InvalidArgumentError(StrCat(
              NodeLabel(*node, node_index), ": output '", name, "' is already defined",
              first != nullptr ? StrCat(" by node '", first->name(), "' (", first->op_type(), ")")
                               : std::string(" as a graph input or initializer"),
              "; SSA allows one definition per name"));
        }
        node->outputs_[i] = value;
      }
      node->lead_size_ = static_cast<uint32_t>(lead_size);
      // The graph holds the names now (a feed's messages may hold them too).
      node_proto->clear_input();
      node_proto->clear_output();
      if (!entry.name.empty()) node_proto->clear_name();
      if (Status checked = CheckNodeProto(*node_proto); !checked.ok()) {
        return std::move(checked).WithContext(NodeLabel(*node, node_index));
      }
      ZG_RETURN_IF_NOT(entry.num_inputs > 0 || entry.num_outputs > 0, NodeLabel(*node, node_index),
                       ": has neither inputs nor outputs");
      node->LoadAnnotations();
      ++node_index;
      if (warming && node_index % kNodesPerWarmingStep == 0) blocks_->WriterAt(node);
    }
    if (follower != nullptr) follower->Linked(linked, parsed.size() == feed.num_nodes());
  }
  if (follower != nullptr) follower->Finish();
  // Linked: nothing is written into the region in bulk from here (the guard covers the returns).
  blocks_->StopWarming();
  for (const PendingInput& pending : undefined) {
    Value* later = FindValue(pending.name);
    std::string node_label = NodeLabel(*pending.node, pending.index);
    if (later != nullptr && later->producer_ != nullptr) {
      return InvalidArgumentError(
          StrCat(node_label, " reads '", pending.name, "' before node '", later->producer_->name(),
                 "' (", later->producer_->op_type(),
                 ") defines it: the nodes are not in topological order, or they form a cycle"));
    }
    return InvalidArgumentError(StrCat(node_label, " reads '", pending.name,
                                       "', which no node, graph input or initializer defines"));
  }

  ZG_RETURN_IF_ERROR(feed.AwaitRest());
  std::vector<onnx::ValueInfoProto*> value_infos = TakeAll(proto->mutable_value_info());
  std::vector<onnx::ValueInfoProto*> outputs = TakeAll(proto->mutable_output());
  // Looked up in bulk: a training graph has an output per updated parameter and state.
  auto find_all = [&](const std::vector<onnx::ValueInfoProto*>& infos) {
    std::vector<std::string_view> names;
    names.reserve(infos.size());
    for (const onnx::ValueInfoProto* info : infos) names.push_back(info->name());
    return FindValues(names);
  };
  const std::vector<Value*> typed_values = find_all(value_infos);
  for (size_t i = 0; i < value_infos.size(); ++i) {
    onnx::ValueInfoProto* info = value_infos[i];
    Value* value = typed_values[i];
    value_infos_.push_back({info, value});
    if (value != nullptr && value->info_ == nullptr) value->info_ = info;
  }
  const std::vector<Value*> output_values = find_all(outputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    onnx::ValueInfoProto* info = outputs[i];
    Value* value = output_values[i];
    ZG_RETURN_IF_NOT(value != nullptr, "graph output '", info->name(),
                     "' is not defined by any node, graph input or initializer");
    if (value->info_ == nullptr) value->info_ = info;
    ++value->graph_output_count_;
    outputs_.push_back(value);
    output_infos_.push_back(info);
  }
  return Status::Ok();
}

Status Graph::WithModelProto(
    const ExternalDataWriter& write_external,
    const std::function<Status(onnx::ModelProto&, const HeldFields&)>& consume) {
  onnx::GraphProto* proto = store_->model->mutable_graph();
  // Put the IR's messages into the model for the call only, and take them back out on every path:
  // the IR keeps owning them (the arena frees them with the graph).
  struct Restore {
    onnx::GraphProto* proto;
    ~Restore() {
      ReleaseAll(proto->mutable_node());
      ReleaseAll(proto->mutable_initializer());
      ReleaseAll(proto->mutable_input());
      ReleaseAll(proto->mutable_output());
      ReleaseAll(proto->mutable_value_info());
    }
  } restore{proto};

  std::vector<Node*> nodes = ScheduledNodes();
  proto->mutable_node()->Reserve(static_cast<int>(nodes.size()));
  std::vector<uint32_t> lead_sizes(nodes.size());
  // Each node's unwritten role (SetRole) as an index into `role_fields` (1-based; 0: none): a
  // node has one of a few distinct roles.
  std::vector<int64_t> role_bits;
  std::vector<std::string> role_fields;
  std::vector<uint32_t> role_field_of;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node* node = nodes[i];
    if (node->role_unwritten_) {
      auto known = std::ranges::find(role_bits, node->role_bits_);
      if (known == role_bits.end()) {
        role_bits.push_back(node->role_bits_);
        role_fields.push_back(RoleField(node->role_bits_));
        known = role_bits.end() - 1;
      }
      if (role_field_of.empty()) role_field_of.resize(nodes.size());
      role_field_of[i] = static_cast<uint32_t>(known - role_bits.begin()) + 1;
    }
    if (node->lead_size_ == Node::kLeadSizeUnknown) {
      node->lead_size_ = static_cast<uint32_t>(LeadSizeOf(*node));
    }
    lead_sizes[i] = node->lead_size_;
    proto->mutable_node()->UnsafeArenaAddAllocated(node->proto_);
  }
  std::vector<const FusedBytes*> fused;
  for (Value* value : initializers_) {
    // Erased, or adopted as a node's output.
    if (value->erased_ || value->initializer_ == nullptr) continue;
    Tensor* tensor = value->initializer_;
    if (tensor->fused_ != nullptr) {
      fused.resize(static_cast<size_t>(proto->initializer_size()));
      fused.push_back(tensor->fused_.get());
    }
    if (tensor->is_external() && write_external != nullptr) {
      auto* copy = store_->New<onnx::TensorProto>();
      *copy = *tensor->proto_;
      ZG_RETURN_IF_ERROR(write_external(*tensor, *copy));
      proto->mutable_initializer()->UnsafeArenaAddAllocated(copy);
    } else {
      proto->mutable_initializer()->UnsafeArenaAddAllocated(tensor->proto_);
    }
  }
  for (onnx::ValueInfoProto* info : input_infos_) {
    proto->mutable_input()->UnsafeArenaAddAllocated(info);
  }
  for (onnx::ValueInfoProto* info : output_infos_) {
    proto->mutable_output()->UnsafeArenaAddAllocated(info);
  }
  for (const TypedValue& entry : value_infos_) {
    if (entry.value != nullptr &&
        (entry.value->erased_ || entry.epoch != entry.value->info_epoch_)) {
      continue;
    }
    proto->mutable_value_info()->UnsafeArenaAddAllocated(entry.info);
  }
  if (!fused.empty()) fused.resize(static_cast<size_t>(proto->initializer_size()));
  const IrHeldFields fields(std::move(nodes), std::move(lead_sizes), std::move(role_fields),
                            std::move(role_field_of), std::move(fused));
  return consume(*store_->model, fields);
}

}  // namespace zerograph
