#include "runtime/kernels/kernel_util.h"

#include <cstring>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {
namespace {

// Null when the attribute is absent; an error when it has another kind.
Status CheckKind(const Node& node, std::string_view name, AttributeType kind, bool* present) {
  std::optional<AttributeType> type = node.GetAttributeType(name);
  *present = type.has_value();
  if (type && *type != kind) {
    return InvalidArgumentError(StrCat("attribute '", name, "' has kind ", static_cast<int>(*type),
                                       ", expected ", static_cast<int>(kind)));
  }
  return Status::Ok();
}

Status Missing(std::string_view name) {
  return InvalidArgumentError(StrCat("required attribute '", name, "' is missing"));
}

}  // namespace

StatusOr<int64_t> IntAttr(const Node& node, std::string_view name,
                          std::optional<int64_t> default_value) {
  bool present;
  ZG_RETURN_IF_ERROR(CheckKind(node, name, AttributeType::kInt, &present));
  if (present) return *node.GetInt(name);
  if (default_value) return *default_value;
  return Missing(name);
}

StatusOr<float> FloatAttr(const Node& node, std::string_view name,
                          std::optional<float> default_value) {
  bool present;
  ZG_RETURN_IF_ERROR(CheckKind(node, name, AttributeType::kFloat, &present));
  if (present) return *node.GetFloat(name);
  if (default_value) return *default_value;
  return Missing(name);
}

StatusOr<std::string> StringAttr(const Node& node, std::string_view name,
                                 std::optional<std::string_view> default_value) {
  bool present;
  ZG_RETURN_IF_ERROR(CheckKind(node, name, AttributeType::kString, &present));
  if (present) return std::string(*node.GetString(name));
  if (default_value) return std::string(*default_value);
  return Missing(name);
}

StatusOr<std::vector<int64_t>> IntsAttr(const Node& node, std::string_view name,
                                        std::optional<std::vector<int64_t>> default_value) {
  bool present;
  ZG_RETURN_IF_ERROR(CheckKind(node, name, AttributeType::kInts, &present));
  if (present) {
    std::span<const int64_t> values = *node.GetInts(name);
    return std::vector<int64_t>(values.begin(), values.end());
  }
  if (default_value) return *std::move(default_value);
  return Missing(name);
}

Status CheckNranksAttribute(const KernelInfo& info) {
  if (!info.node->HasAttribute("nranks")) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(int64_t nranks, IntAttr(*info.node, "nranks"));
  ZG_RETURN_IF_NOT(nranks == info.nranks, "the graph was rewritten for ", nranks,
                   " ranks but runs on ", info.nranks);
  return Status::Ok();
}

StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  ZG_RETURN_IF_NOT(axis >= -rank && axis < rank, "axis ", axis, " out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<int64_t>> ReadInt64Values(const DeviceTensor& tensor, std::string_view what) {
  ZG_RETURN_IF_NOT(tensor.dtype() == DataType::kInt64, what, " must be int64, got ",
                   tensor.ToString());
  ZG_RETURN_IF_NOT(tensor.rank() <= 1, what, " must be 1-D, got ", tensor.ToString());
  ZG_RETURN_IF_NOT(tensor.device().host_accessible(), what, " must be readable on the host");
  const int64_t* data = tensor.data_as<const int64_t>();
  return std::vector<int64_t>(data, data + tensor.numel());
}

StatusOr<const TensorSpec*> RequiredInput(const ShapeContext& ctx, size_t i) {
  const TensorSpec* spec = ctx.input(i);
  ZG_RETURN_IF_NOT(spec != nullptr, "input ", i, " is missing");
  return spec;
}

void CopyUnlessSame(const DeviceTensor& src, const DeviceTensor& dst) {
  if (src.data() != dst.data() && dst.byte_size() > 0) {
    std::memcpy(dst.data(), src.data(), dst.byte_size());
  }
}

}  // namespace zerograph::runtime
