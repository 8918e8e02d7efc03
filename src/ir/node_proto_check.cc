#include "ir/node_proto_check.h"

#include <onnx/onnx_pb.h>

#include <string>

#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

using onnx::AttributeProto;

// The value fields an attribute sets, as ONNX's checker counts them: a singular field when
// present, a repeated one when not empty. A list attribute with no elements sets none.
int CountValueFields(const AttributeProto& attr) {
  return static_cast<int>(attr.has_f()) + attr.has_i() + attr.has_s() + attr.has_t() +
         attr.has_g() + attr.has_sparse_tensor() + attr.has_tp() + (attr.floats_size() > 0) +
         (attr.ints_size() > 0) + (attr.strings_size() > 0) + (attr.tensors_size() > 0) +
         (attr.graphs_size() > 0) + (attr.sparse_tensors_size() > 0) +
         (attr.type_protos_size() > 0);
}

// Whether the value field of the attribute's own type is the one set (or none is).
bool ValueMatchesType(const AttributeProto& attr) {
  switch (attr.type()) {
    case AttributeProto::FLOAT:
      return attr.has_f();
    case AttributeProto::INT:
      return attr.has_i();
    case AttributeProto::STRING:
      return attr.has_s();
    case AttributeProto::TENSOR:
      return attr.has_t();
    case AttributeProto::GRAPH:
      return attr.has_g();
    case AttributeProto::SPARSE_TENSOR:
      return attr.has_sparse_tensor();
    case AttributeProto::TYPE_PROTO:
      return attr.has_tp();
    case AttributeProto::FLOATS:
      return attr.floats_size() > 0;
    case AttributeProto::INTS:
      return attr.ints_size() > 0;
    case AttributeProto::STRINGS:
      return attr.strings_size() > 0;
    case AttributeProto::TENSORS:
      return attr.tensors_size() > 0;
    case AttributeProto::GRAPHS:
      return attr.graphs_size() > 0;
    case AttributeProto::SPARSE_TENSORS:
      return attr.sparse_tensors_size() > 0;
    case AttributeProto::TYPE_PROTOS:
      return attr.type_protos_size() > 0;
    default:
      return false;
  }
}

}  // namespace

Status CheckNodeProto(const onnx::NodeProto& node) {
  ZG_RETURN_IF_NOT(!node.op_type().empty(), "has no op_type");
  const int num_attributes = node.attribute_size();
  for (int a = 0; a < num_attributes; ++a) {
    const AttributeProto& attr = node.attribute(a);
    ZG_RETURN_IF_NOT(!attr.name().empty(), "attribute #", a, " has no name");
    // Nodes have a handful of attributes: a quadratic scan is cheaper than a set.
    for (int b = 0; b < a; ++b) {
      ZG_RETURN_IF_NOT(node.attribute(b).name() != attr.name(), "attribute '", attr.name(),
                       "' appears twice");
    }
    ZG_RETURN_IF_NOT(AttributeProto::AttributeType_IsValid(attr.type()) &&
                         attr.type() != AttributeProto::UNDEFINED,
                     "attribute '", attr.name(), "' has no type or an unknown type");
    ZG_RETURN_IF_NOT(attr.ref_attr_name().empty(), "attribute '", attr.name(),
                     "' refers to a function's attribute '", attr.ref_attr_name(),
                     "', which only a function body may do");
    const int fields = CountValueFields(attr);
    ZG_RETURN_IF_NOT(fields <= 1, "attribute '", attr.name(), "' sets ", fields,
                     " value fields; an attribute holds one value");
    ZG_RETURN_IF_NOT(fields == 0 || ValueMatchesType(attr), "attribute '", attr.name(),
                     "' is declared ", AttributeProto::AttributeType_Name(attr.type()),
                     " but holds a value of another type");
  }
  return Status::Ok();
}

}  // namespace zerograph
