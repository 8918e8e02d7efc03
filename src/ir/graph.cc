#include "zerograph/ir/graph.h"

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ir/node_proto_check.h"
#include "zerograph/ir/graph_feed.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/proto_store.h"

namespace zerograph {
namespace {

// Order keys start this far apart, so that about 32 insertions at one point fit before any
// neighbour has to be relabelled.
constexpr int64_t kOrderSpacing = int64_t{1} << 32;

// "node 'fc1' (MatMul)", or "node #12 (MatMul)" for an unnamed node.
std::string NodeLabel(const onnx::NodeProto& node, int64_t index) {
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

Graph::Graph() : store_(std::make_unique<ProtoStore>()) {
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
  values_by_name_.FindMany(names, values);
  return values;
}

std::vector<Node*> Graph::FindNodes(std::span<const std::string_view> names) const {
  std::vector<Node*> nodes(names.size());
  nodes_by_name_.FindMany(names, nodes);
  return nodes;
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

void Graph::AttachProto(Node* node, onnx::NodeProto* proto) {
  node->proto_ = proto;
  node->name_ = proto->name();
  node->op_info_ = OpInfoOf(proto->domain(), proto->op_type());
}

const OpInfo* Graph::OpInfoOf(std::string_view domain, std::string_view op_type) {
  for (const KnownOp& op : known_ops_) {
    if (op.op_type == op_type && op.domain == domain) return &op.info;
  }
  const OpVersions* versions = OpContracts::Get().FindOp(domain, op_type);
  const OpContract* contract =
      versions != nullptr ? OpContracts::PickVersion(*versions, OpsetVersion(domain)) : nullptr;
  KnownOp& known = known_ops_.emplace_back(std::string(domain), std::string(op_type));
  known.info = {known.domain, known.op_type, versions, contract};
  return &known.info;
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
  tensor.proto_ = proto;
  Value* value = NewValue(proto->name());
  value->initializer_ = &tensor;
  values_by_name_.Insert(value);
  initializers_.push_back(value);
  return value;
}

Status Graph::SetInitializerBytes(Value* value, std::string&& raw_bytes) {
  Tensor* tensor = value->initializer_;
  ZG_RET_CHECK(tensor != nullptr && !tensor->is_external(), "'", value->name(),
               "' is not an initializer held in the model");
  ZG_RET_CHECK(raw_bytes.size() == static_cast<size_t>(tensor->byte_size()), "initializer '",
               value->name(), "' needs ", tensor->byte_size(), " bytes, not ", raw_bytes.size());
  onnx::TensorProto* proto = tensor->proto_;
  // Typed data would be read instead of (or besides) the raw bytes.
  proto->clear_float_data();
  proto->clear_int32_data();
  proto->clear_int64_data();
  proto->clear_double_data();
  proto->clear_uint64_data();
  proto->set_raw_data(std::move(raw_bytes));
  tensor->converted_.clear();
  tensor->converted_valid_ = false;
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
  if (!name.empty()) proto->set_name(UniqueNodeName(name));
  Node* node = NewNode();
  AttachProto(node, proto);
  node->inputs_.assign(inputs.begin(), inputs.end());
  node->input_uses_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    proto->add_input(inputs[i] == nullptr ? std::string() : std::string(inputs[i]->name()));
    if (inputs[i] != nullptr) AddUse(inputs[i], node, static_cast<int>(i));
  }
  node->outputs_.reserve(output_names.size());
  for (size_t i = 0; i < output_names.size(); ++i) {
    proto->add_output(UniqueValueName(output_names[i]));
    Value* value = NewValue(proto->output(static_cast<int>(i)));
    value->producer_ = node;
    value->producer_output_index_ = static_cast<int>(i);
    values_by_name_.Insert(value);
    node->outputs_.push_back(value);
  }
  if (!proto->name().empty()) nodes_by_name_.Insert(node);
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
  if (value->info_ == nullptr) {
    auto* info = store_->New<onnx::ValueInfoProto>();
    info->set_name(std::string(value->name()));
    value->info_ = info;
    if (!value->is_graph_input_) value_infos_.push_back({info, value, value->info_epoch_});
  }
  FillTypeProto(type, value->info_->mutable_type());
  for (size_t i : OutputIndices(value)) FillTypeProto(type, output_infos_[i]->mutable_type());
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
  if (value != nullptr) AddUse(value, node, static_cast<int>(index));
  node->io_dirty_ = true;
}

void Graph::AppendInput(Node* node, Value* value) {
  node->inputs_.push_back(value);
  node->input_uses_.push_back(0);
  if (value != nullptr) AddUse(value, node, static_cast<int>(node->inputs_.size()) - 1);
  node->io_dirty_ = true;
}

bool Graph::RenameValue(Value* value, std::string_view name) {
  if (value->producer_ == nullptr || FindValue(name) != nullptr) return false;
  values_by_name_.Erase(value);
  onnx::NodeProto* proto = value->producer_->proto_;
  proto->set_output(value->producer_output_index_, std::string(name));
  value->name_ = proto->output(value->producer_output_index_);
  values_by_name_.Insert(value);
  for (const Use& use : value->users_) use.node->io_dirty_ = true;
  if (value->info_ != nullptr) value->info_->set_name(std::string(name));
  for (size_t i : OutputIndices(value)) output_infos_[i]->set_name(std::string(name));
  return true;
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  for (const Use& use : from->users_) {
    use.node->inputs_[use.input_index] = to;
    use.node->io_dirty_ = true;
    AddUse(to, use.node, use.input_index);
  }
  from->users_.clear();
  for (size_t i : OutputIndices(from)) SetOutput(i, to);
}

void Graph::AdoptAsOutput(Node* node, Value* value, const TensorType& type) {
  MoveDefinition(node, value);
  SetValueType(value, type);
}

void Graph::AdoptAsOutput(Node* node, Value* value) {
  ZG_CHECK(value->info_ != nullptr, "value '", value->name(), "' has no recorded type to keep");
  MoveDefinition(node, value);
}

void Graph::MoveDefinition(Node* node, Value* value) {
  ZG_CHECK(!value->is_graph_input_, "graph input '", value->name(), "' cannot become an output");
  onnx::NodeProto* proto = node->proto_;
  proto->add_output(std::string(value->name()));
  // The name's old storage (the initializer's or the other node's message) may change below.
  value->name_ = proto->output(proto->output_size() - 1);
  if (Node* old = value->producer_) {
    const auto index = static_cast<size_t>(value->producer_output_index_);
    old->outputs_[index] = nullptr;
    old->proto_->mutable_output(static_cast<int>(index))->clear();
  }
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
  for (size_t i = 0; i < node->inputs_.size(); ++i) {
    if (node->inputs_[i] != nullptr) RemoveUse(node->inputs_[i], node, static_cast<int>(i));
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

Status Graph::EraseInitializer(Value* value) {
  ZG_RET_CHECK(value->initializer_ != nullptr, "'", value->name(), "' is not an initializer");
  ZG_RET_CHECK(value->users_.empty() && value->graph_output_count_ == 0,
               "cannot erase initializer '", value->name(), "': it is still read");
  value->erased_ = true;
  values_by_name_.Erase(value);
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
  for (KnownOp& op : known_ops_) {
    if (op.info.versions != nullptr && NormalizeDomain(op.domain) == NormalizeDomain(domain)) {
      op.info.contract = OpContracts::PickVersion(*op.info.versions, version);
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

namespace {

// The main graph of a model parsed in full.
class ParsedGraph final : public GraphFeed {
 public:
  explicit ParsedGraph(std::vector<onnx::NodeProto*> nodes) : nodes_(std::move(nodes)) {}
  size_t num_nodes() const override { return nodes_.size(); }
  Status AwaitSources() override { return Status::Ok(); }
  StatusOr<std::span<onnx::NodeProto* const>> AwaitNodes(size_t) override {
    return std::span<onnx::NodeProto* const>(nodes_);
  }
  Status AwaitRest() override { return Status::Ok(); }
  void Stop() override {}

 private:
  std::vector<onnx::NodeProto*> nodes_;
};

}  // namespace

StatusOr<std::unique_ptr<Graph>> Graph::FromModelProto(std::unique_ptr<ProtoStore> store,
                                                       const ExternalDataResolver& resolve,
                                                       GraphFeed* feed) {
  auto graph = std::make_unique<Graph>();
  graph->store_ = std::move(store);
  std::optional<ParsedGraph> parsed;
  if (feed == nullptr) {
    feed = &parsed.emplace(TakeAll(graph->store_->model->mutable_graph()->mutable_node()));
  }
  const Status status = graph->ImportGraph(resolve, *feed);
  // The parser writes into the store's arena: it must stop before a failed graph frees it.
  feed->Stop();
  ZG_RETURN_IF_ERROR(status);
  return graph;
}

Status Graph::ImportGraph(const ExternalDataResolver& resolve, GraphFeed& feed) {
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
    tensor.proto_ = tensor_proto;
    ZG_RETURN_IF_NOT(
        DataTypeFromOnnx(tensor_proto->data_type()).has_value() && tensor_proto->data_type() != 0,
        "initializer '", tensor_proto->name(), "' has unknown element type ",
        tensor_proto->data_type());
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
    std::string_view name;
  };
  std::vector<PendingInput> undefined;
  // Nodes are imported a chunk at a time: first every name of the chunk is hashed, then the
  // nodes are linked with each index search prepared a few searches ahead (PrefetchAhead). The
  // names are still cached when compared, and the index's cache misses overlap.
  std::vector<uint64_t> node_hashes;
  std::vector<uint64_t> value_hashes;  // each node's inputs, then its outputs
  int64_t node_index = 0;
  for (size_t chunk = 0; chunk < feed.num_nodes(); chunk += NameIndex<Node>::kBulkChunk) {
    const size_t chunk_size = std::min(NameIndex<Node>::kBulkChunk, feed.num_nodes() - chunk);
    ZG_ASSIGN_OR_RETURN(std::span<onnx::NodeProto* const> parsed,
                        feed.AwaitNodes(chunk + chunk_size));
    const std::span<onnx::NodeProto* const> chunk_nodes = parsed.subspan(chunk, chunk_size);
    node_hashes.clear();
    value_hashes.clear();
    for (const onnx::NodeProto* node_proto : chunk_nodes) {
      node_hashes.push_back(NameIndex<Node>::Hash(node_proto->name()));
      for (const std::string& name : node_proto->input()) {
        value_hashes.push_back(NameIndex<Value>::Hash(name));
      }
      for (const std::string& name : node_proto->output()) {
        value_hashes.push_back(NameIndex<Value>::Hash(name));
      }
    }
    size_t next_hash = 0;  // in value_hashes
    for (size_t k = 0; k < chunk_nodes.size(); ++k) {
      onnx::NodeProto* node_proto = chunk_nodes[k];
      nodes_by_name_.PrefetchAhead(node_hashes, k);
      Node* node = NewNode();
      AttachProto(node, node_proto);
      LinkAtEnd(node);
      ++num_nodes_;
      if (!node_proto->name().empty()) {
        const bool inserted = nodes_by_name_.Insert(node, node_hashes[k]).second;
        ZG_RETURN_IF_NOT(inserted, NodeLabel(*node_proto, node_index),
                         ": node name used twice; node names must be unique");
      }
      node->inputs_.resize(static_cast<size_t>(node_proto->input_size()));
      node->input_uses_.resize(static_cast<size_t>(node_proto->input_size()));
      for (int i = 0; i < node_proto->input_size(); ++i) {
        values_by_name_.PrefetchAhead(value_hashes, next_hash);
        const uint64_t hash = value_hashes[next_hash++];
        const std::string& name = node_proto->input(i);
        if (name.empty()) continue;
        Value* input = values_by_name_.Find(name, hash);
        if (input == nullptr) {
          undefined.push_back({node, node_index, name});
          continue;
        }
        node->inputs_[static_cast<size_t>(i)] = input;
        AddUse(input, node, i);
      }
      node->outputs_.resize(static_cast<size_t>(node_proto->output_size()));
      for (int i = 0; i < node_proto->output_size(); ++i) {
        values_by_name_.PrefetchAhead(value_hashes, next_hash);
        const uint64_t hash = value_hashes[next_hash++];
        const std::string& name = node_proto->output(i);
        if (name.empty()) continue;
        Value* value = NewValue(name);
        value->producer_ = node;
        value->producer_output_index_ = i;
        auto [holder, inserted] = values_by_name_.Insert(value, hash);
        if (!inserted) {
          Node* first = holder->producer_;
          return InvalidArgumentError(StrCat(
              NodeLabel(*node_proto, node_index), ": output '", name, "' is already defined",
              first != nullptr ? StrCat(" by node '", first->name(), "' (", first->op_type(), ")")
                               : std::string(" as a graph input or initializer"),
              "; SSA allows one definition per name"));
        }
        node->outputs_[static_cast<size_t>(i)] = value;
      }
      if (Status checked = CheckNodeProto(*node_proto); !checked.ok()) {
        return std::move(checked).WithContext(NodeLabel(*node_proto, node_index));
      }
      node->LoadAnnotations();
      ++node_index;
    }
  }
  for (const PendingInput& pending : undefined) {
    Value* later = FindValue(pending.name);
    std::string node_label = NodeLabel(*pending.node->proto_, pending.index);
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
    const std::function<Status(onnx::ModelProto&, const NodeAppendix&)>& consume) {
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

  proto->mutable_node()->Reserve(static_cast<int>(num_nodes_));
  // Each node's unwritten role (SetRole) as an index into `role_fields` (1-based; 0: none), by
  // the node's position in the model: a table read in order, not a node per call, as the writer
  // asks twice for every node.
  std::vector<std::pair<int64_t, std::string>> role_fields;
  std::vector<uint32_t> role_field_of;
  size_t position = 0;
  for (Node* node = first_; node != nullptr; node = node->next_, ++position) {
    if (node->role_unwritten_) {
      auto known =
          std::ranges::find(role_fields, node->role_bits_, &std::pair<int64_t, std::string>::first);
      if (known == role_fields.end()) {
        role_fields.emplace_back(node->role_bits_, RoleField(node->role_bits_));
        known = role_fields.end() - 1;
      }
      if (role_field_of.empty()) role_field_of.resize(num_nodes_);
      role_field_of[position] = static_cast<uint32_t>(known - role_fields.begin()) + 1;
    }
    if (node->io_dirty_) {
      node->proto_->clear_input();
      for (Value* input : node->inputs_) {
        node->proto_->add_input(input == nullptr ? std::string() : std::string(input->name()));
      }
      node->io_dirty_ = false;
    }
    proto->mutable_node()->UnsafeArenaAddAllocated(node->proto_);
  }
  for (Value* value : initializers_) {
    // Erased, or adopted as a node's output.
    if (value->erased_ || value->initializer_ == nullptr) continue;
    Tensor* tensor = value->initializer_;
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
  if (role_fields.empty()) return consume(*store_->model, nullptr);
  return consume(*store_->model, [&](size_t index) -> std::span<const std::byte> {
    const uint32_t field = role_field_of[index];
    if (field == 0) return {};
    return std::as_bytes(std::span(role_fields[field - 1].second));
  });
}

}  // namespace zerograph
