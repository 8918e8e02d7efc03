// Fuzz target: the `zerograph.*` training metadata. The input is lines `key=value`, each setting
// one metadata entry of the MLP demo's training graph (whose values the names may refer to);
// then the spec is read and checked, and roles inferred from it, as loading a model does.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_target.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/role_inference.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/onnx/load_model.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  // Loaded for every input: the metadata edits below must not carry over.
  StatusOr<std::unique_ptr<Graph>> loaded = LoadModel(ZG_SOURCE_DIR "/models/mlp_demo.onnx");
  ZG_CHECK(loaded.ok(), "fuzz: cannot load the base model: ", loaded.status().ToString());
  Graph& graph = **loaded;

  std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    graph.SetMetadata(line.substr(0, eq), line.substr(eq + 1));
  }

  ZG_ASSIGN_OR_RETURN(bool has_spec, CheckTrainingSpec(graph));
  ZG_ASSIGN_OR_RETURN(std::optional<ResolvedTrainingSpec> resolved,
                      ReadResolvedTrainingSpec(graph));
  // The check and the read must agree on what is there.
  ZG_CHECK(has_spec == resolved.has_value(), "fuzz: CheckTrainingSpec and ReadTrainingSpec differ");
  if (!resolved) return Status();
  // Loading reads the binding's values alone: they, and the roles inferred from them, must be
  // what the names give.
  StatusOr<std::optional<ResolvedTrainingSpec>> values_only =
      ReadResolvedTrainingSpec(graph, BindingNames::kNone);
  ZG_CHECK(values_only.ok() && values_only->has_value() &&
               (*values_only)->binding_new_values == resolved->binding_new_values &&
               (*values_only)->binding_old_values == resolved->binding_old_values,
           "fuzz: the binding's values differ when its names are left out");
  // The rewrite writes the binding back from the names viewed: they must be the names copied.
  StatusOr<std::optional<ResolvedTrainingSpec>> viewed =
      ReadResolvedTrainingSpec(graph, BindingNames::kViewed);
  ZG_CHECK(viewed.ok() && viewed->has_value() &&
               std::ranges::equal((*viewed)->binding_names.entries(), resolved->spec.state_binding,
                                  [](const auto& view, const auto& copy) {
                                    return view.first == copy.first && view.second == copy.second;
                                  }),
           "fuzz: the binding's names viewed differ from the names copied");
  StatusOr<std::vector<int64_t>> by_names = InferRoleBits(graph, resolved->spec);
  StatusOr<std::vector<int64_t>> by_values = InferRoleBits(graph, **values_only);
  ZG_CHECK(by_names.ok() == by_values.ok() && (!by_names.ok() || *by_names == *by_values),
           "fuzz: roles inferred from the binding's names and from its values differ");
  ZG_RETURN_IF_ERROR(by_names.status());
  return InferMissingRoles(graph, resolved->spec);
}

}  // namespace zerograph::fuzz
