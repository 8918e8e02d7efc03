#ifndef ZEROGRAPH_IR_TRAINING_SPEC_H_
#define ZEROGRAPH_IR_TRAINING_SPEC_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph {

class Graph;
class Value;

// What makes an ONNX model a training program, from its `zerograph.*` metadata (docs/formats.md,
// "Training graph").
struct TrainingSpec {
  // `zerograph.loss`: the scalar float graph output that training minimises.
  std::string loss;
  // `zerograph.inputs`: graph inputs fed each step. Data inputs take rows from the dataset.
  std::vector<std::string> data_inputs;
  // The float scalar learning-rate input, and the 1-based int64 update-count input (may be empty).
  std::string lr_input;
  std::string step_input;
  // `zerograph.state_binding`: after a step, each new value (first) replaces the initializer
  // (second).
  std::vector<std::pair<std::string, std::string>> state_binding;
  // `zerograph.loss_scaling` (dynamic loss scaling, docs/training.md): the fp32 scalar
  // initializers holding the scale the loss's gradient starts from, and the count of steps since
  // the scale last changed. Both are state: the gradient-control pass binds their new values.
  struct LossScaling {
    std::string scale;
    std::string good_steps;
  };
  std::optional<LossScaling> loss_scaling;
  // Written by the rewrite: `zerograph.nranks` and `zerograph.layout` (the layout manifest, JSON).
  std::optional<int64_t> nranks;
  std::optional<std::string> layout;
};

// The graph's training spec; nullopt when the model has no `zerograph.*` metadata at all. A present
// but malformed key (bad JSON, wrong types, a name that is no value of the graph) is an error
// naming the key.
StatusOr<std::optional<TrainingSpec>> ReadTrainingSpec(const Graph& graph);

// The loss's name as the graph's metadata gives it (`zerograph.loss`), the rest of the spec
// neither read nor checked; nullopt where there is none: the graph is no training graph.
std::optional<std::string_view> DeclaredLoss(const Graph& graph);

// The state binding's names, entry by entry, without copies where the binding's text spells them
// plainly (as exporters and WriteTrainingSpec write it): views into the graph's metadata, valid
// until the binding is next written.
class StateBindingNames {
 public:
  StateBindingNames() = default;
  // Views into a binding's text.
  explicit StateBindingNames(std::vector<std::pair<std::string_view, std::string_view>> views)
      : entries_(std::move(views)) {}
  // Names decoded from a binding's text (escapes, other bytes), held here.
  explicit StateBindingNames(std::vector<std::pair<std::string, std::string>> decoded);
  // Moving keeps the views valid (the held names stay where they are); a copy would not.
  StateBindingNames(StateBindingNames&&) = default;
  StateBindingNames& operator=(StateBindingNames&&) = default;
  StateBindingNames(const StateBindingNames&) = delete;
  StateBindingNames& operator=(const StateBindingNames&) = delete;

  // (new value, initializer replaced) per entry, in order.
  std::span<const std::pair<std::string_view, std::string_view>> entries() const {
    return entries_;
  }

 private:
  std::vector<std::pair<std::string, std::string>> decoded_;
  std::vector<std::pair<std::string_view, std::string_view>> entries_;
};

// A training spec and, for each state_binding entry k, the value it names as new and the
// initializer it replaces (binding_new_values[k], binding_old_values[k]). A pass that edits the
// graph and then rewrites the binding uses the values, resolved once: a large model's binding
// names a million of them.
struct ResolvedTrainingSpec {
  TrainingSpec spec;
  std::vector<const Value*> binding_new_values;
  std::vector<const Value*> binding_old_values;
  // With BindingNames::kViewed, the entries' names.
  StateBindingNames binding_names;
};

// How ReadResolvedTrainingSpec gives the binding's names besides its values.
enum class BindingNames {
  // Copied into spec.state_binding.
  kCopied,
  // As views (ResolvedTrainingSpec::binding_names); spec.state_binding is left empty. A pass that
  // rewrites the binding after its edits writes the names it keeps from these.
  kViewed,
  // Not at all: a reader that needs only the values (role inference) is spared copying them.
  kNone,
};

StatusOr<std::optional<ResolvedTrainingSpec>> ReadResolvedTrainingSpec(
    const Graph& graph, BindingNames names = BindingNames::kCopied);

// Checks the metadata as ReadTrainingSpec does, with the same errors, without building the spec;
// returns whether there is any. Loading a graph calls it when it needs no spec: the state binding
// of a large graph names a million values, and copying each name to drop it at once costs.
StatusOr<bool> CheckTrainingSpec(const Graph& graph);

// Writes `spec` into the graph's metadata (format version 1).
void WriteTrainingSpec(const TrainingSpec& spec, Graph& graph);

// The same with the state binding given apart (spec.state_binding is not read), as views: a pass
// that rewrites a large binding passes the names it keeps (BindingNames::kViewed) and those it
// adds.
void WriteTrainingSpec(const TrainingSpec& spec,
                       std::span<const std::pair<std::string_view, std::string_view>> binding,
                       Graph& graph);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_TRAINING_SPEC_H_
