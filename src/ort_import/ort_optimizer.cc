#include "ort_import/ort_optimizer.h"

#include <memory>
#include <utility>

#include <onnx/onnx_pb.h>

#include "zerograph/core/mapped_file.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

constexpr std::string_view kMicrosoftDomain = "com.microsoft";

Status ReadAdamWAttributes(const onnx::NodeProto& node, OrtOptimizer& optimizer) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    const std::string& name = attr.name();
    float* real = name == "alpha"          ? &optimizer.beta1
                  : name == "beta"         ? &optimizer.beta2
                  : name == "epsilon"      ? &optimizer.epsilon
                  : name == "weight_decay" ? &optimizer.weight_decay
                                           : nullptr;
    int64_t* integer = name == "adam_mode"      ? &optimizer.adam_mode
                       : name == "correct_bias" ? &optimizer.correct_bias
                                                : nullptr;
    if (real != nullptr && attr.type() == onnx::AttributeProto::FLOAT) {
      *real = attr.f();
    } else if (integer != nullptr && attr.type() == onnx::AttributeProto::INT) {
      *integer = attr.i();
    } else {
      return InvalidArgumentError(StrCat("AdamWOptimizer attribute '", name,
                                         "' is unknown or of the wrong type; zerograph maps "
                                         "alpha, beta, epsilon, weight_decay (float), adam_mode "
                                         "and correct_bias (int)"));
    }
  }
  ZG_RETURN_IF_NOT(optimizer.adam_mode == 0 || optimizer.adam_mode == 1,
                   "AdamWOptimizer adam_mode ", optimizer.adam_mode, " is neither 0 nor 1");
  return Status::Ok();
}

StatusOr<OrtOptimizer> Parse(const MappedFile& file) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(file.bytes().data(), static_cast<int>(file.bytes().size()))) {
    return DataLossError("not an ONNX model (the protobuf does not parse)");
  }
  const onnx::GraphProto& graph = model.graph();
  ZG_RETURN_IF_NOT(graph.node_size() == 1, "expected one optimizer node, found ",
                   graph.node_size());
  const onnx::NodeProto& node = graph.node(0);
  OrtOptimizer optimizer;
  if (node.domain() == kMicrosoftDomain && node.op_type() == "AdamWOptimizer") {
    optimizer.kind = OrtOptimizer::Kind::kAdamW;
    ZG_RETURN_IF_ERROR(ReadAdamWAttributes(node, optimizer));
    return optimizer;
  }
  if (node.domain() == kMicrosoftDomain && node.op_type() == "SGDOptimizerV2") {
    ZG_RETURN_IF_NOT(node.attribute_size() == 0, "SGDOptimizerV2 has attribute '",
                     node.attribute(0).name(), "', which zerograph does not map");
    optimizer.kind = OrtOptimizer::Kind::kSgd;
    return optimizer;
  }
  return InvalidArgumentError(StrCat("optimizer '", node.domain(), "::", node.op_type(),
                                     "' cannot be mapped: zerograph maps com.microsoft "
                                     "AdamWOptimizer and SGDOptimizerV2"));
}

}  // namespace

StatusOr<OrtOptimizer> ReadOrtOptimizer(const std::string& path) {
  // The file's own errors name it.
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::Open(path));
  StatusOr<OrtOptimizer> optimizer = Parse(*file);
  if (!optimizer.ok()) return std::move(optimizer).status().WithContext(StrCat("'", path, "'"));
  return optimizer;
}

}  // namespace zerograph
