#include "zerograph/ir/node.h"

#include <onnx/onnx_pb.h>

namespace zerograph {
namespace {

// Annotations (role, stream, bucket and any other) are the attributes named "__...".
bool IsAnnotation(std::string_view name) {
  return name.size() >= 2 && name[0] == '_' && name[1] == '_';
}

}  // namespace

void Node::SetRole(OpRole role, bool is_loss) {
  role_bits_ = static_cast<int64_t>(role) | (is_loss ? kLossRoleBit : 0);
  role_unwritten_ = !may_have_role_attr_ || !HasAttribute(kOpRoleAttr);
  if (!role_unwritten_) MutableAttribute(kOpRoleAttr, AttributeType::kInt)->set_i(role_bits_);
}

std::string_view Node::stream() const { return stream_.empty() ? kComputeStream : stream_; }

void Node::SetStream(std::string_view stream) {
  onnx::AttributeProto* attr = MutableAttribute(kExecutionStreamAttr, AttributeType::kString);
  attr->set_s(std::string(stream));
  stream_ = attr->s();
}

void Node::SetBucket(int64_t bucket) {
  bucket_ = bucket;
  MutableAttribute(kBucketAttr, AttributeType::kInt)->set_i(bucket);
}

void Node::LoadAnnotations() {
  may_have_role_attr_ = false;
  for (const onnx::AttributeProto& attr : proto_->attribute()) {
    // Most attributes are rejected by the first character.
    if (!IsAnnotation(attr.name())) continue;
    if (attr.name() == kOpRoleAttr) may_have_role_attr_ = true;
    if (attr.name() == kOpRoleAttr && attr.type() == onnx::AttributeProto::INT) {
      role_bits_ = attr.i();
    } else if (attr.name() == kExecutionStreamAttr && attr.type() == onnx::AttributeProto::STRING) {
      stream_ = attr.s();
    } else if (attr.name() == kBucketAttr && attr.type() == onnx::AttributeProto::INT) {
      bucket_ = attr.i();
    }
  }
}

const onnx::AttributeProto* Node::FindAttribute(std::string_view name) const {
  for (const onnx::AttributeProto& attr : proto_->attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

onnx::AttributeProto* Node::MutableAttribute(std::string_view name, AttributeType type) {
  // Contracts declare no annotation: setting a role, stream or bucket keeps the check.
  if (!IsAnnotation(name)) contract_checked_ = false;
  onnx::AttributeProto* found = nullptr;
  for (onnx::AttributeProto& attr : *proto_->mutable_attribute()) {
    if (attr.name() == name) {
      found = &attr;
      break;
    }
  }
  if (found == nullptr) {
    found = proto_->add_attribute();
    found->set_name(std::string(name));
    if (name == kOpRoleAttr) may_have_role_attr_ = true;
  } else {
    found->Clear();
    found->set_name(std::string(name));
  }
  found->set_type(static_cast<onnx::AttributeProto::AttributeType>(type));
  return found;
}

std::optional<AttributeType> Node::GetAttributeType(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr) return std::nullopt;
  return static_cast<AttributeType>(attr->type());
}

std::vector<std::string_view> Node::AttributeNames() const {
  std::vector<std::string_view> names;
  names.reserve(proto_->attribute_size());
  for (const onnx::AttributeProto& attr : proto_->attribute()) names.push_back(attr.name());
  return names;
}

std::optional<int64_t> Node::GetInt(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::INT) return std::nullopt;
  return attr->i();
}

std::optional<float> Node::GetFloat(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::FLOAT) return std::nullopt;
  return attr->f();
}

std::optional<std::string_view> Node::GetString(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::STRING) return std::nullopt;
  return std::string_view(attr->s());
}

std::optional<std::span<const int64_t>> Node::GetInts(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::span<const int64_t>(attr->ints().data(), static_cast<size_t>(attr->ints_size()));
}

std::optional<std::span<const float>> Node::GetFloats(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::FLOATS) return std::nullopt;
  return std::span<const float>(attr->floats().data(), static_cast<size_t>(attr->floats_size()));
}

std::optional<std::vector<std::string_view>> Node::GetStrings(std::string_view name) const {
  const onnx::AttributeProto* attr = FindAttribute(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::STRINGS) return std::nullopt;
  return std::vector<std::string_view>(attr->strings().begin(), attr->strings().end());
}

void Node::SetInt(std::string_view name, int64_t value) {
  MutableAttribute(name, AttributeType::kInt)->set_i(value);
}

void Node::SetFloat(std::string_view name, float value) {
  MutableAttribute(name, AttributeType::kFloat)->set_f(value);
}

void Node::SetString(std::string_view name, std::string_view value) {
  MutableAttribute(name, AttributeType::kString)->set_s(std::string(value));
}

void Node::SetInts(std::string_view name, std::span<const int64_t> values) {
  onnx::AttributeProto* attr = MutableAttribute(name, AttributeType::kInts);
  attr->mutable_ints()->Add(values.begin(), values.end());
}

void Node::SetFloats(std::string_view name, std::span<const float> values) {
  onnx::AttributeProto* attr = MutableAttribute(name, AttributeType::kFloats);
  attr->mutable_floats()->Add(values.begin(), values.end());
}

void Node::SetStrings(std::string_view name, std::span<const std::string> values) {
  onnx::AttributeProto* attr = MutableAttribute(name, AttributeType::kStrings);
  for (const std::string& value : values) attr->add_strings(value);
}

void Node::CopyAttributesFrom(const Node& other) {
  for (const onnx::AttributeProto& attr : other.proto_->attribute()) {
    if (IsAnnotation(attr.name())) continue;
    onnx::AttributeProto* copy =
        MutableAttribute(attr.name(), static_cast<AttributeType>(attr.type()));
    *copy = attr;
  }
}

bool Node::RemoveAttribute(std::string_view name) {
  if (name == kOpRoleAttr && role_unwritten_) {
    role_bits_ = -1;
    role_unwritten_ = false;
    return true;
  }
  auto* attrs = proto_->mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() != name) continue;
    attrs->DeleteSubrange(i, 1);
    if (!IsAnnotation(name)) contract_checked_ = false;
    if (name == kOpRoleAttr) role_bits_ = -1;
    if (name == kExecutionStreamAttr) stream_ = {};
    if (name == kBucketAttr) bucket_ = -1;
    // Cached annotation views point into attributes that may have moved; reread them.
    LoadAnnotations();
    return true;
  }
  return false;
}

}  // namespace zerograph
