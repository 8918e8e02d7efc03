#include "zerograph/ir/training_spec.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerograph/core/json.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

// ordered_json keeps the file's key order, so reading and writing a spec keeps state_binding's
// order.
using Json = nlohmann::ordered_json;

constexpr std::string_view kPrefix = "zerograph.";
constexpr std::string_view kFormatVersionKey = "zerograph.format_version";
constexpr std::string_view kLossKey = "zerograph.loss";
constexpr std::string_view kInputsKey = "zerograph.inputs";
constexpr std::string_view kStateBindingKey = "zerograph.state_binding";
constexpr std::string_view kNranksKey = "zerograph.nranks";
constexpr std::string_view kLayoutKey = "zerograph.layout";
constexpr std::string_view kLossScalingKey = "zerograph.loss_scaling";
constexpr std::string_view kFormatVersion = "1";

bool IsFloatType(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 ||
         dtype == DataType::kBFloat16 || dtype == DataType::kFloat64;
}

// True when the recorded type, if any, allows a scalar (rank 0, or one element) of an accepted
// dtype.
bool MaybeScalarOf(const Value& value, bool (*dtype_ok)(DataType)) {
  std::optional<TensorType> type = value.type();
  if (!type) return true;
  if (type->dtype != DataType::kUndefined && !dtype_ok(type->dtype)) return false;
  if (!type->dims) return true;
  for (int64_t dim : *type->dims) {
    if (dim != 1 && dim != TensorType::kUnknownDim) return false;
  }
  return true;
}

std::string TypeText(const Value& value) {
  std::optional<TensorType> type = value.type();
  return type ? type->ToString() : "untyped";
}

// How errors name a metadata value: "metadata 'zerograph.inputs'".
std::string MetadataName(std::string_view key) { return StrCat("metadata '", key, "'"); }

// Checks that `text` is a JSON object, as ParseJson would read it (no key twice: a duplicate would
// silently keep only one of two bindings), without building the value: the layout manifest of a
// large rewritten graph has an object per parameter.
Status CheckJsonObject(std::string_view key, std::string_view text) {
  ZG_RETURN_IF_ERROR(CheckJson(text, MetadataName(key)));
  // Valid JSON is an object exactly when it opens with a brace.
  const size_t first = text.find_first_not_of(" \t\n\r");
  ZG_RETURN_IF_NOT(first != std::string_view::npos && text[first] == '{', "metadata '", key,
                   "' must be a JSON object");
  return Status::Ok();
}

StatusOr<std::string> JsonString(std::string_view key, std::string_view field, const Json& json) {
  ZG_RETURN_IF_NOT(json.is_string(), "metadata '", key, "': '", field, "' must be a string, got ",
                   json.dump());
  return json.get<std::string>();
}

// Checks that `name` is a graph input fed each step (not an initializer, whose value the graph
// owns).
Status CheckFedInput(const Graph& graph, std::string_view key, std::string_view field,
                     std::string_view name) {
  const Value* value = graph.FindValue(name);
  ZG_RETURN_IF_NOT(value != nullptr, "metadata '", key, "': ", field, " '", name,
                   "' is no value of the graph");
  ZG_RETURN_IF_NOT(value->is_graph_input() && value->initializer() == nullptr, "metadata '", key,
                   "': ", field, " '", name, "' is not a graph input");
  return Status::Ok();
}

Status ReadInputs(const Graph& graph, std::string_view text, TrainingSpec& spec) {
  const std::string_view key = kInputsKey;
  ZG_ASSIGN_OR_RETURN(Json json, ParseJson(text, MetadataName(key)));
  ZG_RETURN_IF_NOT(json.is_object(), "metadata '", key, "' must be a JSON object, got ", text);
  std::unordered_set<std::string> seen;
  for (const auto& [field, item] : json.items()) {
    if (field == "data") {
      ZG_RETURN_IF_NOT(item.is_array(), "metadata '", key, "': 'data' must be an array of names");
      for (const Json& entry : item) {
        ZG_ASSIGN_OR_RETURN(std::string name, JsonString(key, "data", entry));
        ZG_RETURN_IF_ERROR(CheckFedInput(graph, key, "data input", name));
        spec.data_inputs.push_back(std::move(name));
      }
    } else if (field == "lr") {
      ZG_ASSIGN_OR_RETURN(spec.lr_input, JsonString(key, "lr", item));
      ZG_RETURN_IF_ERROR(CheckFedInput(graph, key, "lr input", spec.lr_input));
      const Value& value = *graph.FindValue(spec.lr_input);
      ZG_RETURN_IF_NOT(MaybeScalarOf(value, IsFloatType), "metadata '", key, "': lr input '",
                       spec.lr_input, "' must be a float scalar, is ", TypeText(value));
    } else if (field == "step") {
      ZG_ASSIGN_OR_RETURN(spec.step_input, JsonString(key, "step", item));
      ZG_RETURN_IF_ERROR(CheckFedInput(graph, key, "step input", spec.step_input));
      const Value& value = *graph.FindValue(spec.step_input);
      ZG_RETURN_IF_NOT(
          MaybeScalarOf(value, [](DataType dtype) { return dtype == DataType::kInt64; }),
          "metadata '", key, "': step input '", spec.step_input, "' must be an int64 scalar, is ",
          TypeText(value));
    } else {
      return InvalidArgumentError(
          StrCat("metadata '", key, "': unknown field '", field, "' (expected data, lr, step)"));
    }
  }
  // One input fed from two sources would be ambiguous.
  for (const std::string& name : spec.data_inputs) {
    ZG_RETURN_IF_NOT(seen.insert(name).second, "metadata '", key, "': input '", name,
                     "' is listed twice");
  }
  for (const std::string* name : {&spec.lr_input, &spec.step_input}) {
    if (name->empty()) continue;
    ZG_RETURN_IF_NOT(seen.insert(*name).second, "metadata '", key, "': input '", *name,
                     "' is listed twice");
  }
  return Status::Ok();
}

// Collects a flat JSON object of strings in file order, from text CheckJson has passed (so no key
// comes twice). A SAX handler, because the state binding has an entry per parameter and state:
// building an ordered_json object searches its keys linearly on every insert, which is quadratic
// in the entries.
class StringMapHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::pair<std::string, std::string>> entries;
  std::string error;

  bool key(string_t& name) override {
    key_ = name;
    return true;
  }
  bool string(string_t& value) override {
    if (depth_ != 1) return Fail("must be a JSON object");
    entries.emplace_back(std::move(key_), value);
    return true;
  }
  bool start_object(std::size_t) override {
    if (++depth_ > 1) return Fail(StrCat("'", key_, "' must be a string"));
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool null() override {
    return Fail(depth_ == 1 ? StrCat("'", key_, "' must be a string") : "must be a JSON object");
  }
  bool boolean(bool) override { return null(); }
  bool number_integer(number_integer_t) override { return null(); }
  bool number_unsigned(number_unsigned_t) override { return null(); }
  bool number_float(number_float_t, const string_t&) override { return null(); }
  bool binary(binary_t&) override { return null(); }
  bool start_array(std::size_t) override { return null(); }
  bool end_array() override { return null(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return Fail("is not valid JSON");
  }

 private:
  bool Fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }
  int depth_ = 0;
  std::string key_;
};

// The state binding as exporters write it: one flat JSON object of plain printable-ASCII names,
// `{"w.new": "w", ...}`. Returns views into `text`, or nullopt for anything else (escapes,
// other bytes or values, malformed text), which the general reader then parses and reports on.
// Why: the binding has an entry per parameter and optimizer state, millions in a large model, and
// the general reader (a SAX parser plus a set of the keys) costs microseconds an entry.
std::optional<std::vector<std::pair<std::string_view, std::string_view>>> ScanPlainBinding(
    std::string_view text) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
  };
  auto consume = [&](char c) {
    skip_space();
    if (i >= text.size() || text[i] != c) return false;
    ++i;
    return true;
  };
  auto scan_string = [&](std::string_view& out) {
    if (!consume('"')) return false;
    const size_t begin = i;
    for (; i < text.size() && text[i] != '"'; ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
    }
    if (i >= text.size()) return false;
    out = text.substr(begin, i - begin);
    ++i;
    return true;
  };
  std::vector<std::pair<std::string_view, std::string_view>> entries;
  if (!consume('{')) return std::nullopt;
  if (!consume('}')) {
    do {
      std::string_view new_name, old_name;
      if (!scan_string(new_name) || !consume(':') || !scan_string(old_name)) return std::nullopt;
      entries.emplace_back(new_name, old_name);
    } while (consume(','));
    if (!consume('}')) return std::nullopt;
  }
  skip_space();
  if (i != text.size()) return std::nullopt;
  return entries;
}

// The binding's entries as the general JSON reader gives them, names decoded.
StatusOr<std::vector<std::pair<std::string, std::string>>> ParseBinding(std::string_view text) {
  const std::string_view key = kStateBindingKey;
  ZG_RETURN_IF_ERROR(CheckJson(text, MetadataName(key)));
  StringMapHandler handler;
  const bool parsed = nlohmann::json::sax_parse(text.begin(), text.end(), &handler);
  ZG_RETURN_IF_NOT(parsed && handler.error.empty(), "metadata '", key, "' ",
                   handler.error.empty() ? std::string("is not valid JSON") : handler.error, ": ",
                   text.substr(0, 200));
  return std::move(handler.entries);
}

// Where ReadStateBinding puts what it reads: the names into the spec when `keep`, or else as
// views into `views` when given; the values into the vectors given.
struct BindingSink {
  bool keep = true;
  StateBindingNames* views = nullptr;
  std::vector<const Value*>* new_values = nullptr;
  std::vector<const Value*>* old_values = nullptr;

  void Add(const Value* new_value, const Value* old_value) const {
    if (new_values != nullptr) new_values->push_back(new_value);
    if (old_values != nullptr) old_values->push_back(old_value);
  }
};

// Finds the values a binding names in the order of a list that holds most of them in that
// order: the graph's outputs for the new values, its initializers for the old ones, as
// zerograph's writers and exporters list a binding. Each name is compared with the next few
// values where the walk along the list is; a name not there is looked up, and the walk goes on
// after the value found; where names keep missing (a binding in another order), the rest are
// looked up in bulk. Why: looking a name up in a large graph's index misses the cache two or three
// times (slot, value, name), while the list's values lie in memory as they were loaded: at 1M
// nodes the binding's 720k names took about 110 ms to look up, 18 ms to walk.
class ListWalk {
 public:
  ListWalk(const Graph& graph, std::span<Value* const> list) : graph_(graph), list_(list) {}

  // The value called `name`; null when there is none, or when the names have missed the list too
  // often to be worth looking up one at a time: the caller looks them up in bulk.
  Value* Find(std::string_view name) {
    ++names_;
    for (size_t i = at_; i < list_.size() && i < at_ + kLookAhead; ++i) {
      if (list_[i]->name() == name) {
        at_ = i + 1;
        return list_[i];
      }
    }
    if (++misses_ > kMissesAllowed + names_ / kNamesPerMissAllowed) return nullptr;
    Value* value = graph_.FindValue(name);
    if (value != nullptr) ResumeAfter(*value);
    return value;
  }

 private:
  // Values the binding does not name may lie between two it does (a loss among the outputs, a
  // constant among the initializers).
  static constexpr size_t kLookAhead = 4;
  static constexpr size_t kMissesAllowed = 16;
  static constexpr size_t kNamesPerMissAllowed = 16;

  // Moves the walk past `value` where the list holds it. A loaded graph's lists hold their values
  // in the order they were made, that is of their ids.
  void ResumeAfter(const Value& value) {
    const auto it =
        std::lower_bound(list_.begin(), list_.end(), value.id(),
                         [](const Value* listed, int64_t id) { return listed->id() < id; });
    if (it != list_.end() && *it == &value) at_ = static_cast<size_t>(it - list_.begin()) + 1;
  }

  const Graph& graph_;
  const std::span<Value* const> list_;
  size_t at_ = 0;
  size_t names_ = 0;
  size_t misses_ = 0;
};

// The values `entries` name, new and old in turn (null where none is called so).
std::vector<Value*> BoundValues(
    const Graph& graph, std::span<const std::pair<std::string_view, std::string_view>> entries) {
  std::vector<Value*> values(2 * entries.size());
  const std::vector<Value*> initializers = graph.initializers();
  ListWalk new_values(graph, graph.outputs());
  ListWalk old_values(graph, initializers);
  std::vector<std::string_view> left;  // for a bulk lookup
  std::vector<size_t> left_at;         // in `values`
  auto find = [&](ListWalk& walk, std::string_view name, size_t at) {
    values[at] = walk.Find(name);
    if (values[at] != nullptr) return;
    left.push_back(name);
    left_at.push_back(at);
  };
  for (size_t k = 0; k < entries.size(); ++k) {
    find(new_values, entries[k].first, 2 * k);
    find(old_values, entries[k].second, 2 * k + 1);
  }
  const std::vector<Value*> found = graph.FindValues(left);
  for (size_t i = 0; i < left.size(); ++i) values[left_at[i]] = found[i];
  return values;
}

// Reads a plain binding (ScanPlainBinding) whose every entry is valid; returns false, changing
// nothing, otherwise. The checks for a key or an initializer named twice mark value ids (names and
// values correspond one to one).
bool ReadPlainStateBinding(const Graph& graph, std::string_view text, const BindingSink& sink,
                           TrainingSpec& spec) {
  std::optional<std::vector<std::pair<std::string_view, std::string_view>>> entries =
      ScanPlainBinding(text);
  if (!entries) return false;
  const std::vector<Value*> values = BoundValues(graph, *entries);
  std::vector<char> is_new(static_cast<size_t>(graph.value_id_bound()), 0);
  std::vector<char> is_target(static_cast<size_t>(graph.value_id_bound()), 0);
  for (size_t k = 0; k < entries->size(); ++k) {
    const Value* new_value = values[2 * k];
    const Value* old_value = values[2 * k + 1];
    if (new_value == nullptr || !new_value->is_graph_output() || old_value == nullptr ||
        old_value->initializer() == nullptr) {
      return false;
    }
    char& new_seen = is_new[static_cast<size_t>(new_value->id())];
    char& target_seen = is_target[static_cast<size_t>(old_value->id())];
    if (new_seen || target_seen) return false;
    new_seen = target_seen = 1;
  }
  for (std::vector<const Value*>* list : {sink.new_values, sink.old_values}) {
    if (list != nullptr) list->reserve(entries->size());
  }
  for (size_t k = 0; k < entries->size(); ++k) sink.Add(values[2 * k], values[2 * k + 1]);
  if (!sink.keep) {
    if (sink.views != nullptr) *sink.views = StateBindingNames(std::move(*entries));
    return true;
  }
  spec.state_binding.reserve(entries->size());
  for (const auto& [new_name, old_name] : *entries) {
    spec.state_binding.emplace_back(std::string(new_name), std::string(old_name));
  }
  return true;
}

// Reads the binding: its names into `spec.state_binding` and its values as `sink` asks, or with
// neither asked only checks it.
Status ReadStateBinding(const Graph& graph, std::string_view text, const BindingSink& sink,
                        TrainingSpec& spec) {
  if (ReadPlainStateBinding(graph, text, sink, spec)) return Status::Ok();
  // The general reader: any JSON, and the error that names what is wrong.
  const std::string_view key = kStateBindingKey;
  ZG_ASSIGN_OR_RETURN(auto entries, ParseBinding(text));
  std::unordered_set<std::string> targets;
  for (auto& [new_name, old_name] : entries) {
    const Value* new_value = graph.FindValue(new_name);
    ZG_RETURN_IF_NOT(new_value != nullptr, "metadata '", key, "': new value '", new_name,
                     "' is no value of the graph");
    ZG_RETURN_IF_NOT(new_value->is_graph_output(), "metadata '", key, "': new value '", new_name,
                     "' is not a graph output");
    const Value* old_value = graph.FindValue(old_name);
    ZG_RETURN_IF_NOT(old_value != nullptr, "metadata '", key, "': '", new_name, "' replaces '",
                     old_name, "', which is no value of the graph");
    ZG_RETURN_IF_NOT(old_value->initializer() != nullptr, "metadata '", key, "': '", new_name,
                     "' replaces '", old_name, "', which is not an initializer");
    ZG_RETURN_IF_NOT(targets.insert(old_name).second, "metadata '", key, "': initializer '",
                     old_name, "' is replaced by two values");
    sink.Add(new_value, old_value);
    if (sink.keep) spec.state_binding.emplace_back(std::move(new_name), std::move(old_name));
  }
  if (!sink.keep && sink.views != nullptr) *sink.views = StateBindingNames(std::move(entries));
  return Status::Ok();
}

Status ReadLossScaling(const Graph& graph, std::string_view text, TrainingSpec& spec) {
  const std::string_view key = kLossScalingKey;
  ZG_ASSIGN_OR_RETURN(Json json, ParseJson(text, MetadataName(key)));
  ZG_RETURN_IF_NOT(
      json.is_object() && json.size() == 2 && json.contains("scale") && json.contains("good_steps"),
      "metadata '", key, "' must be a JSON object with 'scale' and 'good_steps', got ",
      text.substr(0, 200));
  TrainingSpec::LossScaling scaling;
  ZG_ASSIGN_OR_RETURN(scaling.scale, JsonString(key, "scale", json["scale"]));
  ZG_ASSIGN_OR_RETURN(scaling.good_steps, JsonString(key, "good_steps", json["good_steps"]));
  for (const std::string* name : {&scaling.scale, &scaling.good_steps}) {
    const Value* value = graph.FindValue(*name);
    ZG_RETURN_IF_NOT(value != nullptr && value->initializer() != nullptr &&
                         value->initializer()->dtype() == DataType::kFloat32 &&
                         value->initializer()->numel() == 1,
                     "metadata '", key, "': '", *name, "' must be an fp32 scalar initializer");
  }
  spec.loss_scaling = std::move(scaling);
  return Status::Ok();
}

// Names are bytes to ONNX; replacing invalid UTF-8 keeps dump() from throwing.
std::string Dump(const Json& json) {
  return json.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Status ReadNranks(std::string_view text, TrainingSpec& spec) {
  int64_t nranks = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, nranks);
  ZG_RETURN_IF_NOT(ec == std::errc() && ptr == end && nranks >= 1, "metadata '", kNranksKey,
                   "' must be a positive integer, got '", text, "'");
  spec.nranks = nranks;
  return Status::Ok();
}

// ReadTrainingSpec, the state binding read as `binding` asks.
StatusOr<std::optional<TrainingSpec>> ReadSpec(const Graph& graph, const BindingSink& binding) {
  std::optional<std::string_view> version, loss, inputs, binding_text, nranks, layout, loss_scaling;
  bool any = false;
  for (const auto& [key, text] : graph.metadata()) {
    if (!key.starts_with(kPrefix)) continue;
    any = true;
    if (key == kFormatVersionKey) {
      version = text;
    } else if (key == kLossKey) {
      loss = text;
    } else if (key == kInputsKey) {
      inputs = text;
    } else if (key == kStateBindingKey) {
      binding_text = text;
    } else if (key == kNranksKey) {
      nranks = text;
    } else if (key == kLayoutKey) {
      layout = text;
    } else if (key == kLossScalingKey) {
      loss_scaling = text;
    } else {
      // Most likely a misspelling; ignoring it would silently drop what it says.
      return InvalidArgumentError(StrCat("unknown metadata key '", key, "'"));
    }
  }
  if (!any) return std::optional<TrainingSpec>();

  ZG_RETURN_IF_NOT(version.has_value(), "metadata '", kFormatVersionKey,
                   "' is missing (other zerograph.* keys are present)");
  ZG_RETURN_IF_NOT(*version == kFormatVersion, "metadata '", kFormatVersionKey,
                   "': unknown format version '", *version, "' (this build reads '", kFormatVersion,
                   "')");
  ZG_RETURN_IF_NOT(loss.has_value(), "metadata '", kLossKey,
                   "' is missing (other zerograph.* keys are present)");

  TrainingSpec spec;
  spec.loss = std::string(*loss);
  const Value* loss_value = graph.FindValue(spec.loss);
  ZG_RETURN_IF_NOT(loss_value != nullptr, "metadata '", kLossKey, "': '", spec.loss,
                   "' is no value of the graph");
  ZG_RETURN_IF_NOT(loss_value->is_graph_output(), "metadata '", kLossKey, "': '", spec.loss,
                   "' is not a graph output");
  ZG_RETURN_IF_NOT(MaybeScalarOf(*loss_value, IsFloatType), "metadata '", kLossKey, "': '",
                   spec.loss, "' must be a float scalar, is ", TypeText(*loss_value));

  if (inputs) ZG_RETURN_IF_ERROR(ReadInputs(graph, *inputs, spec));
  if (binding_text) ZG_RETURN_IF_ERROR(ReadStateBinding(graph, *binding_text, binding, spec));
  if (nranks) ZG_RETURN_IF_ERROR(ReadNranks(*nranks, spec));
  if (loss_scaling) ZG_RETURN_IF_ERROR(ReadLossScaling(graph, *loss_scaling, spec));
  if (layout) {
    ZG_RETURN_IF_ERROR(CheckJsonObject(kLayoutKey, *layout));
    spec.layout = std::string(*layout);
  }
  return std::optional<TrainingSpec>(std::move(spec));
}

}  // namespace

std::optional<std::string_view> DeclaredLoss(const Graph& graph) {
  return graph.GetMetadata(kLossKey);
}

StatusOr<std::optional<TrainingSpec>> ReadTrainingSpec(const Graph& graph) {
  return ReadSpec(graph, BindingSink{});
}

StatusOr<std::optional<ResolvedTrainingSpec>> ReadResolvedTrainingSpec(const Graph& graph,
                                                                       BindingNames names) {
  ResolvedTrainingSpec resolved;
  ZG_ASSIGN_OR_RETURN(
      std::optional<TrainingSpec> spec,
      ReadSpec(graph, BindingSink{.keep = names == BindingNames::kCopied,
                                  .views = names == BindingNames::kViewed ? &resolved.binding_names
                                                                          : nullptr,
                                  .new_values = &resolved.binding_new_values,
                                  .old_values = &resolved.binding_old_values}));
  if (!spec) return std::optional<ResolvedTrainingSpec>();
  resolved.spec = std::move(*spec);
  return std::optional<ResolvedTrainingSpec>(std::move(resolved));
}

StatusOr<bool> CheckTrainingSpec(const Graph& graph) {
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> spec,
                      ReadSpec(graph, BindingSink{.keep = false}));
  return spec.has_value();
}

StateBindingNames::StateBindingNames(std::vector<std::pair<std::string, std::string>> decoded)
    : decoded_(std::move(decoded)) {
  entries_.reserve(decoded_.size());
  for (const auto& [new_name, old_name] : decoded_) entries_.emplace_back(new_name, old_name);
}

void WriteTrainingSpec(const TrainingSpec& spec, Graph& graph) {
  std::vector<std::pair<std::string_view, std::string_view>> binding;
  binding.reserve(spec.state_binding.size());
  for (const auto& [new_name, old_name] : spec.state_binding)
    binding.emplace_back(new_name, old_name);
  WriteTrainingSpec(spec, binding, graph);
}

void WriteTrainingSpec(const TrainingSpec& spec,
                       std::span<const std::pair<std::string_view, std::string_view>> binding_names,
                       Graph& graph) {
  graph.SetMetadata(kFormatVersionKey, kFormatVersion);
  graph.SetMetadata(kLossKey, spec.loss);

  Json inputs = Json::object();
  inputs["data"] = Json::array();
  for (const std::string& name : spec.data_inputs) inputs["data"].push_back(name);
  if (!spec.lr_input.empty()) inputs["lr"] = spec.lr_input;
  if (!spec.step_input.empty()) inputs["step"] = spec.step_input;
  graph.SetMetadata(kInputsKey, Dump(inputs));

  // Written entry by entry, in order (an ordered_json object would search its keys per insert).
  std::string binding = "{";
  for (const auto& [new_name, old_name] : binding_names) {
    if (binding.size() > 1) binding += ',';
    AppendJsonString(new_name, binding);
    binding += ':';
    AppendJsonString(old_name, binding);
  }
  binding += '}';
  graph.SetMetadata(kStateBindingKey, binding);

  if (spec.nranks) graph.SetMetadata(kNranksKey, StrCat(*spec.nranks));
  if (spec.layout) graph.SetMetadata(kLayoutKey, *spec.layout);
  if (spec.loss_scaling) {
    graph.SetMetadata(kLossScalingKey, Dump(Json{{"scale", spec.loss_scaling->scale},
                                                 {"good_steps", spec.loss_scaling->good_steps}}));
  }
}

}  // namespace zerograph
