#include "passes/autodiff/loss_builder.h"

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "passes/autodiff/value_shapes.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/value.h"

namespace zerograph::autodiff {
namespace {

using Loss = AutodiffPass::Loss;

// The label's dims and the names of its symbolic ones ("" where a dim has none): `--label-shape`
// (a number, or a symbolic dim's name), else the prediction's, less the class axis for
// cross-entropy.
struct LabelShape {
  std::vector<int64_t> dims;
  std::vector<std::string> names;
};

StatusOr<LabelShape> LabelShapeOf(const Value& prediction, const TensorType& type,
                                  const AutodiffPass::Options& options) {
  LabelShape shape;
  if (options.label_shape) {
    for (const std::string& dim : *options.label_shape) {
      int64_t d = 0;
      auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), d);
      if (error == std::errc() && end == dim.data() + dim.size()) {
        ZG_RETURN_IF_NOT(d >= 1, "--label-shape: dim ", d, " must be positive");
        shape.dims.push_back(d);
        shape.names.emplace_back();
      } else {
        ZG_RETURN_IF_NOT(!dim.empty(), "--label-shape: an empty dim");
        shape.dims.push_back(TensorType::kUnknownDim);
        shape.names.push_back(dim);
      }
    }
    return shape;
  }
  shape.dims = *type.dims;
  const std::vector<std::string_view> names = prediction.dim_params();
  for (size_t axis = 0; axis < shape.dims.size(); ++axis) {
    shape.names.emplace_back(axis < names.size() ? names[axis] : std::string_view());
  }
  if (options.loss == Loss::kCrossEntropy) {
    shape.dims.erase(shape.dims.begin() + 1);
    shape.names.erase(shape.names.begin() + 1);
  }
  return shape;
}

}  // namespace

StatusOr<AppendedLoss> AppendLoss(Graph& graph, Value* prediction, const TensorType& type,
                                  const AutodiffPass::Options& options) {
  GraphBuilder b(graph);
  b.SetRole(OpRole::kForward, /*is_loss=*/true);
  if (options.loss == Loss::kOutput) {
    ZG_RETURN_IF_NOT(IsFloating(type.dtype) && type.dims && type.dims->empty(), "--loss output: '",
                     prediction->name(), "' is ", type.ToString(), ", not a floating scalar");
    ZG_RETURN_IF_NOT(prediction->producer() != nullptr, "--loss output: '", prediction->name(),
                     "' is not computed by a node");
    prediction->producer()->SetRole(OpRole::kForward, /*is_loss=*/true);
    return AppendedLoss{prediction, nullptr};
  }

  const bool mse = options.loss == Loss::kMeanSquaredError;
  const char* loss_flag = mse ? "mse" : "cross-entropy";
  ZG_RETURN_IF_NOT(IsFloating(type.dtype) && type.dims, "--loss ", loss_flag, ": '",
                   prediction->name(), "' is ", type.ToString(), ", not a floating tensor");
  ZG_RETURN_IF_NOT(mse || type.dims->size() >= 2, "--loss cross-entropy: '", prediction->name(),
                   "' is ", type.ToString(), "; the scores need a class axis: [N, C, d...]");
  const DataType label_dtype = options.label_dtype.value_or(mse ? type.dtype : DataType::kInt64);
  if (mse) {
    ZG_RETURN_IF_NOT(label_dtype == type.dtype, "label '", options.label, "' is ",
                     DataTypeName(label_dtype), ", mse needs ", DataTypeName(type.dtype),
                     " (the dtype of '", prediction->name(), "')");
  } else {
    ZG_RETURN_IF_NOT(label_dtype == DataType::kInt64 || label_dtype == DataType::kInt32, "label '",
                     options.label, "' is ", DataTypeName(label_dtype),
                     ", cross-entropy needs int64 or int32 class indices");
  }
  ZG_ASSIGN_OR_RETURN(const LabelShape label_shape, LabelShapeOf(*prediction, type, options));
  const std::vector<int64_t>& label_dims = label_shape.dims;
  const size_t want_rank = type.dims->size() - (mse ? 0 : 1);
  ZG_RETURN_IF_NOT(label_dims.size() == want_rank, "label '", options.label, "' has rank ",
                   label_dims.size(), ", ", loss_flag, " on '", prediction->name(), "' (",
                   type.ToString(), ") needs ", want_rank);
  ZG_RETURN_IF_NOT(graph.FindValue(options.label) == nullptr, "label '", options.label,
                   "' names a value the graph already has (--label NAME)");

  Value* label = graph.AddInput(options.label, TensorType{label_dtype, label_dims});
  // Named as the prediction's (or --label-shape's) symbolic dims, so the file says the label's
  // batch is the model's.
  for (size_t axis = 0; axis < label_dims.size(); ++axis) {
    if (label_dims[axis] == TensorType::kUnknownDim && !label_shape.names[axis].empty()) {
      graph.SetDimParam(label, axis, label_shape.names[axis]);
    }
  }
  Value* loss = nullptr;
  if (mse) {
    b.SetRole(OpRole::kForward);
    Value* diff = b.Op("Sub", {prediction, label}, "loss.diff");
    Value* squared = b.Op("Mul", {diff, diff}, "loss.squared");
    b.SetRole(OpRole::kForward, /*is_loss=*/true);
    loss = b.Op("ReduceMean", {squared}, "loss", {Attr("keepdims", 0)});
  } else {
    Node* node = b.AddNode("SoftmaxCrossEntropyLoss", std::vector<Value*>{prediction, label},
                           std::vector<std::string>{"loss"}, {Attr("reduction", "mean")});
    if (options.ignore_index) node->SetInt("ignore_index", *options.ignore_index);
    loss = node->output(0);
  }
  graph.SetValueType(loss, TensorType{type.dtype, std::vector<int64_t>{}});
  return AppendedLoss{loss, label};
}

}  // namespace zerograph::autodiff
