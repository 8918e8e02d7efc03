#include "zerograph/ir/graph.h"

#include <algorithm>

#include <onnx/onnx_pb.h>

#include "ir/proto_store.h"

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

}  // namespace

Graph::Graph() : store_(std::make_unique<ProtoStore>()) {
  store_->model->set_ir_version(8);
  store_->model->mutable_graph();
}

Graph::~Graph() = default;

// --- Reading ------------------------------------------------------------------------------------

Value* Graph::FindValue(std::string_view name) const {
  auto it = values_by_name_.find(name);
  return it == values_by_name_.end() ? nullptr : it->second;
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = nodes_by_name_.find(name);
  return it == nodes_by_name_.end() ? nullptr : it->second;
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> alive;
  alive.reserve(initializers_.size());
  for (Value* value : initializers_) {
    if (!value->erased_) alive.push_back(value);
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
  values_by_name_.emplace(value->name(), value);
  inputs_.push_back(value);
  input_infos_.push_back(info);
  return value;
}

Value* Graph::AddInitializer(std::string_view name, DataType dtype, std::span<const int64_t> dims,
                             std::span<const std::byte> bytes) {
  auto* proto = store_->New<onnx::TensorProto>();
  proto->set_name(UniqueValueName(name));
  proto->set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : dims) proto->add_dims(d);
  proto->set_raw_data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  Tensor& tensor = tensor_pool_.emplace_back(GraphKey());
  tensor.proto_ = proto;
  Value* value = NewValue(proto->name());
  value->initializer_ = &tensor;
  values_by_name_.emplace(value->name(), value);
  initializers_.push_back(value);
  return value;
}

void Graph::AddOutput(Value* value) {
  auto* info = store_->New<onnx::ValueInfoProto>();
  info->set_name(std::string(value->name()));
  if (std::optional<TensorType> type = value->type()) FillTypeProto(*type, info->mutable_type());
  outputs_.push_back(value);
  output_infos_.push_back(info);
  ++value->graph_output_count_;
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
}

Node* Graph::AddNode(std::string_view op_type, std::string_view domain,
                     std::span<Value* const> inputs, std::span<const std::string> output_names,
                     std::string_view name, Node* before) {
  auto* proto = store_->New<onnx::NodeProto>();
  proto->set_op_type(std::string(op_type));
  proto->set_domain(std::string(domain));
  if (!name.empty()) proto->set_name(UniqueNodeName(name));
  Node* node = NewNode();
  node->proto_ = proto;
  node->inputs_.assign(inputs.begin(), inputs.end());
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
    values_by_name_.emplace(value->name(), value);
    node->outputs_.push_back(value);
  }
  if (!proto->name().empty()) nodes_by_name_.emplace(proto->name(), node);
  if (before == nullptr) {
    LinkAtEnd(node);
  } else {
    LinkBefore(node, before);
  }
  ++num_nodes_;
  return node;
}

std::string Graph::UniqueValueName(std::string_view base) const {
  if (FindValue(base) == nullptr) return std::string(base);
  int64_t& counter = name_counters_[std::string(base)];
  std::string candidate;
  do {
    candidate = StrCat(base, "_", ++counter);
  } while (FindValue(candidate) != nullptr);
  return candidate;
}

std::string Graph::UniqueNodeName(std::string_view base) const {
  if (FindNode(base) == nullptr) return std::string(base);
  int64_t& counter = name_counters_[StrCat("node:", base)];
  std::string candidate;
  do {
    candidate = StrCat(base, "_", ++counter);
  } while (FindNode(candidate) != nullptr);
  return candidate;
}

void Graph::SetValueType(Value* value, const TensorType& type) {
  if (value->info_ == nullptr) {
    auto* info = store_->New<onnx::ValueInfoProto>();
    info->set_name(std::string(value->name()));
    value->info_ = info;
    if (!value->is_graph_input_) value_infos_.push_back({info, value});
  }
  FillTypeProto(type, value->info_->mutable_type());
  if (value->graph_output_count_ == 0) return;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] == value) FillTypeProto(type, output_infos_[i]->mutable_type());
  }
}

// --- Editing ------------------------------------------------------------------------------------

void Graph::AddUse(Value* value, Node* node, int index) { value->users_.push_back({node, index}); }

void Graph::RemoveUse(Value* value, Node* node, int index) {
  std::pmr::vector<Use>& users = value->users_;
  auto it = std::find(users.begin(), users.end(), Use{node, index});
  ZG_CHECK(it != users.end(), "value '", value->name(), "' has no use by input ", index);
  *it = users.back();
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
  if (value != nullptr) AddUse(value, node, static_cast<int>(node->inputs_.size()) - 1);
  node->io_dirty_ = true;
}

bool Graph::RenameValue(Value* value, std::string_view name) {
  if (value->producer_ == nullptr || FindValue(name) != nullptr) return false;
  values_by_name_.erase(value->name());
  onnx::NodeProto* proto = value->producer_->proto_;
  proto->set_output(value->producer_output_index_, std::string(name));
  value->name_ = proto->output(value->producer_output_index_);
  values_by_name_.emplace(value->name(), value);
  for (const Use& use : value->users_) use.node->io_dirty_ = true;
  if (value->info_ != nullptr) value->info_->set_name(std::string(name));
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] == value) output_infos_[i]->set_name(std::string(name));
  }
  return true;
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  for (const Use& use : from->users_) {
    use.node->inputs_[use.input_index] = to;
    use.node->io_dirty_ = true;
    to->users_.push_back(use);
  }
  from->users_.clear();
  if (from->graph_output_count_ == 0) return;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] == from) SetOutput(i, to);
  }
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
    values_by_name_.erase(output->name());
  }
  if (!node->name().empty()) nodes_by_name_.erase(node->name());
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
  values_by_name_.erase(value->name());
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

StatusOr<std::unique_ptr<Graph>> Graph::FromModelProto(std::unique_ptr<ProtoStore> store,
                                                       const ExternalDataResolver& resolve) {
  auto graph = std::make_unique<Graph>();
  graph->store_ = std::move(store);
  ZG_RETURN_IF_ERROR(graph->ImportGraph(resolve));
  return graph;
}

Status Graph::ImportGraph(const ExternalDataResolver& resolve) {
  onnx::GraphProto* proto = store_->model->mutable_graph();
  std::vector<onnx::TensorProto*> initializers = TakeAll(proto->mutable_initializer());
  std::vector<onnx::ValueInfoProto*> inputs = TakeAll(proto->mutable_input());
  std::vector<onnx::NodeProto*> nodes = TakeAll(proto->mutable_node());
  std::vector<onnx::ValueInfoProto*> value_infos = TakeAll(proto->mutable_value_info());
  std::vector<onnx::ValueInfoProto*> outputs = TakeAll(proto->mutable_output());

  size_t expected_values = initializers.size() + inputs.size() + nodes.size() + nodes.size() / 4;
  values_by_name_.reserve(expected_values);
  nodes_by_name_.reserve(nodes.size());

  auto define = [&](Value* value, std::string_view what) -> Status {
    auto [it, inserted] = values_by_name_.emplace(value->name(), value);
    ZG_RETURN_IF_NOT(inserted, "value '", value->name(), "' is defined twice (", what,
                     "); SSA allows one definition per name");
    return Status::Ok();
  };

  for (onnx::TensorProto* tensor_proto : initializers) {
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
    ZG_RETURN_IF_ERROR(define(value, "as an initializer"));
    initializers_.push_back(value);
  }
  for (const onnx::SparseTensorProto& sparse : proto->sparse_initializer()) {
    // Sparse initializers stay in the message as they are; their names are defined values.
    Value* value = NewValue(sparse.values().name());
    ZG_RETURN_IF_ERROR(define(value, "as a sparse initializer"));
  }
  for (onnx::ValueInfoProto* info : inputs) {
    Value* value = FindValue(info->name());
    if (value == nullptr || value->initializer_ == nullptr) {
      // Before IR 4 initializers were listed among the inputs too; otherwise an input is new.
      value = NewValue(info->name());
      ZG_RETURN_IF_ERROR(define(value, "as a graph input"));
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
  int64_t node_index = 0;
  for (onnx::NodeProto* node_proto : nodes) {
    Node* node = NewNode();
    node->proto_ = node_proto;
    LinkAtEnd(node);
    ++num_nodes_;
    if (!node_proto->name().empty()) {
      auto [it, inserted] = nodes_by_name_.emplace(node_proto->name(), node);
      ZG_RETURN_IF_NOT(inserted, NodeLabel(*node_proto, node_index),
                       ": node name used twice; node names must be unique");
    }
    node->inputs_.resize(static_cast<size_t>(node_proto->input_size()));
    for (int i = 0; i < node_proto->input_size(); ++i) {
      const std::string& name = node_proto->input(i);
      if (name.empty()) continue;
      auto it = values_by_name_.find(name);
      if (it == values_by_name_.end()) {
        undefined.push_back({node, node_index, name});
        continue;
      }
      node->inputs_[static_cast<size_t>(i)] = it->second;
      it->second->users_.push_back({node, i});
    }
    node->outputs_.resize(static_cast<size_t>(node_proto->output_size()));
    for (int i = 0; i < node_proto->output_size(); ++i) {
      const std::string& name = node_proto->output(i);
      if (name.empty()) continue;
      Value* value = NewValue(name);
      value->producer_ = node;
      value->producer_output_index_ = i;
      auto [it, inserted] = values_by_name_.emplace(value->name(), value);
      if (!inserted) {
        Node* first = it->second->producer_;
        return InvalidArgumentError(StrCat(
            NodeLabel(*node_proto, node_index), ": output '", name, "' is already defined",
            first != nullptr ? StrCat(" by node '", first->name(), "' (", first->op_type(), ")")
                             : std::string(" as a graph input or initializer"),
            "; SSA allows one definition per name"));
      }
      node->outputs_[static_cast<size_t>(i)] = value;
    }
    for (const onnx::AttributeProto& attr : node_proto->attribute()) {
      ZG_RETURN_IF_NOT(attr.type() != onnx::AttributeProto::UNDEFINED,
                       NodeLabel(*node_proto, node_index), ": attribute '", attr.name(),
                       "' has no type or an unknown type");
    }
    node->LoadAnnotations();
    ++node_index;
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

  for (onnx::ValueInfoProto* info : value_infos) {
    Value* value = FindValue(info->name());
    value_infos_.push_back({info, value});
    if (value != nullptr && value->info_ == nullptr) value->info_ = info;
  }
  for (onnx::ValueInfoProto* info : outputs) {
    Value* value = FindValue(info->name());
    ZG_RETURN_IF_NOT(value != nullptr, "graph output '", info->name(),
                     "' is not defined by any node, graph input or initializer");
    if (value->info_ == nullptr) value->info_ = info;
    ++value->graph_output_count_;
    outputs_.push_back(value);
    output_infos_.push_back(info);
  }
  return Status::Ok();
}

Status Graph::WithModelProto(const ExternalDataWriter& write_external,
                             const std::function<Status(const onnx::ModelProto&)>& consume) {
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
  for (Node* node = first_; node != nullptr; node = node->next_) {
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
    if (value->erased_) continue;
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
    if (entry.value != nullptr && entry.value->erased_) continue;
    proto->mutable_value_info()->UnsafeArenaAddAllocated(entry.info);
  }
  return consume(*store_->model);
}

}  // namespace zerograph
