#include "zerograph/train/training_graph_check.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/optimizer_signature.h"
#include "zerograph/ir/tensor_type.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph {
namespace {

constexpr std::string_view kHowToMakeOne =
    "a forward model becomes one with `rewrite-graph MODEL.onnx -o TRAIN.onnx --train`, ONNX "
    "Runtime's training artifacts with `rewrite-graph --from-ort DIR -o TRAIN.onnx` "
    "(docs/training.md)";

// ONNX Runtime's training_model.onnx feeds each gradient through an accumulation buffer that is a
// graph input, reset by the bool input `lazy_reset_grad`; its parameters are graph inputs too.
bool IsOrtTrainingModel(const Graph& graph) {
  return std::any_of(graph.inputs().begin(), graph.inputs().end(), [](const Value* input) {
    return input->name() == "lazy_reset_grad" ||
           input->name().ends_with("_grad.accumulation.buffer");
  });
}

std::string QuotedList(const std::vector<std::string_view>& names) {
  constexpr size_t kShown = 8;
  std::vector<std::string> quoted;
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    quoted.push_back(StrCat("'", names[i], "'"));
  std::string list = StrJoin(quoted, ", ");
  if (names.size() > kShown) list += StrCat(" and ", names.size() - kShown, " more");
  return list;
}

// Problems with the graph's inputs given its metadata: inputs nothing feeds, and shapes no data
// file binds (a data input's symbolic dims are bound per run; lr and step are scalars).
void CheckInputs(const Graph& graph, const TrainingSpec& spec, std::vector<std::string>& problems) {
  std::unordered_set<std::string_view> data(spec.data_inputs.begin(), spec.data_inputs.end());
  std::vector<std::string_view> unfed;
  std::vector<std::string_view> unbindable;
  std::vector<std::string_view> rankless;
  for (const Value* input : graph.inputs()) {
    if (input->initializer() != nullptr) continue;
    const std::string_view name = input->name();
    const std::optional<TensorType> type = input->type();
    if (data.contains(name)) {
      if (!type || !type->dims || type->dims->empty()) rankless.push_back(name);
      continue;
    }
    if (name != spec.lr_input && name != spec.step_input) {
      unfed.push_back(name);
    } else if (type && type->dims && !type->numel()) {
      unbindable.push_back(name);
    }
  }
  if (!unfed.empty()) {
    problems.push_back(StrCat(
        "graph input(s) ", QuotedList(unfed),
        " are fed by nothing: not data inputs (zerograph.inputs), not lr or step, and not "
        "initializers; a parameter must be an initializer holding its value",
        IsOrtTrainingModel(graph) ? " (this is ONNX Runtime's training model: import it with "
                                    "`rewrite-graph --from-ort DIR`)"
                                  : ""));
  }
  if (!unbindable.empty()) {
    problems.push_back(StrCat("input(s) ", QuotedList(unbindable),
                              " have symbolic dimensions that no data file binds: give them "
                              "fixed dimensions"));
  }
  if (!rankless.empty()) {
    problems.push_back(StrCat("data input(s) ", QuotedList(rankless),
                              " have no recorded shape with a batch dimension: record their "
                              "type (value_info or the graph input's type)"));
  }
}

bool HasOptimizer(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (FindOptimizerSignature(*node)) return true;
  }
  return false;
}

}  // namespace

Status CheckTrainingGraph(const Graph& graph, const runtime::KernelRegistry& registry,
                          runtime::DeviceType device) {
  std::vector<std::string> problems;
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(graph);
  if (!spec.ok()) {
    problems.push_back(std::string(spec.status().message()));
  } else if (!spec->has_value()) {
    problems.push_back(
        StrCat("it is not a training graph (no zerograph.loss metadata): ", kHowToMakeOne));
    if (IsOrtTrainingModel(graph)) {
      problems.push_back(
          "its parameters and gradient accumulation buffers are graph inputs, as in ONNX "
          "Runtime's training_model.onnx: import the artifacts with `rewrite-graph --from-ort "
          "DIR`");
    }
  } else {
    CheckInputs(graph, **spec, problems);
    if (!HasOptimizer(graph)) {
      problems.push_back(
          "it has no optimizer node, so nothing would train: `rewrite-graph --train` adds one");
    }
  }
  if (Status kernels = registry.CheckEveryOpHasKernel(graph, device); !kernels.ok()) {
    problems.push_back(std::string(kernels.message()));
  }
  if (problems.empty()) return Status::Ok();
  if (problems.size() == 1)
    return InvalidArgumentError(StrCat("the graph cannot train: ", problems[0]));
  std::string text = StrCat("the graph cannot train (", problems.size(), " problems):");
  for (const std::string& problem : problems) text += StrCat("\n  - ", problem);
  return InvalidArgumentError(text);
}

}  // namespace zerograph
