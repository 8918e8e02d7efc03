#include "zerograph/passes/amp_pass.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "passes/autodiff/value_shapes.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/float_convert.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/value.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

std::string_view ShortName(DataType dtype) {
  return dtype == DataType::kBFloat16 ? "bf16" : dtype == DataType::kFloat16 ? "fp16" : "fp32";
}

// Every op name that some contract declares, for checking the lists.
Status CheckOpNames(const std::vector<std::string>& names, std::string_view option) {
  std::set<std::string_view> known;
  for (const OpContract* contract : OpContracts::Get().All()) known.insert(contract->name);
  for (const std::string& name : names) {
    ZG_RETURN_IF_NOT(known.contains(name), option, " '", name,
                     "': no op of that name (graph-exec --list-ops lists them)");
  }
  return Status::Ok();
}

// The graph's edits: dtypes as they are now (by value id) and the Casts made so far.
class Rewriter {
 public:
  Rewriter(Graph& graph, DataType low, int64_t& casts) : graph_(graph), low_(low), casts_(casts) {}

  DataType dtype(const Value& value) const {
    const auto id = static_cast<size_t>(value.id());
    return id < dtypes_.size() ? dtypes_[id] : DataType::kUndefined;
  }
  DataType original(const Value& value) const {
    const auto id = static_cast<size_t>(value.id());
    return id < originals_.size() ? originals_[id] : DataType::kUndefined;
  }
  // Records that `value` was `original` in the forward graph and is `now` after the rewrite.
  void Set(const Value& value, DataType original, DataType now) {
    const auto id = static_cast<size_t>(value.id());
    if (id >= dtypes_.size()) {
      dtypes_.resize(id + 1, DataType::kUndefined);
      originals_.resize(id + 1, DataType::kUndefined);
    }
    originals_[id] = original;
    dtypes_[id] = now;
  }

  // `value` in `to`: itself, or the one Cast of it to `to`, made before `reader` the first time.
  Value* In(Value* value, DataType to, Node* reader) {
    if (dtype(*value) == to) return value;
    auto& made = to == low_ ? low_of_ : fp32_of_;
    if (auto it = made.find(value); it != made.end()) return it->second;
    const std::string name = StrCat(value->name(), "_", ShortName(to));
    Node* cast = graph_.AddNode("Cast", "", {value}, {name}, graph_.UniqueNodeName(name), reader);
    cast->SetInt("to", static_cast<int64_t>(to));
    Value* result = cast->output(0);
    Set(*result, original(*value), to);
    made[value] = result;
    ++casts_;
    return result;
  }

  // Makes the node's output `value`, now low, be read as before in `original(value)`: the Cast
  // back takes the value's name (graph outputs and readers keep the name they know), and `value`
  // is renamed `<name>_bf16`. Reuses a Cast already made for readers. `move_readers`: the readers
  // so far read the original (O1, right after the producer changed) and move to the Cast.
  Status CastBack(Value* value, bool move_readers) {
    const DataType to = original(*value);
    const std::optional<TensorType> type = value->type();
    const std::vector<std::string_view> params = value->dim_params();
    const std::vector<std::string> names(params.begin(), params.end());
    const std::string name(value->name());
    std::vector<Use> uses(value->users().begin(), value->users().end());
    std::vector<size_t> outputs;
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      if (graph_.outputs()[i] == value) outputs.push_back(i);
    }
    ZG_RET_CHECK(
        graph_.RenameValue(value, graph_.UniqueValueName(StrCat(name, "_", ShortName(low_)))),
        "cannot rename '", name, "'");
    Value* back;
    if (auto it = fp32_of_.find(value); it != fp32_of_.end()) {
      back = it->second;
      ZG_RET_CHECK(graph_.RenameValue(back, name), "cannot rename '", back->name(), "'");
    } else {
      Node* producer = value->producer();
      Node* cast = graph_.AddNode("Cast", "", {value}, {name}, graph_.UniqueNodeName(name),
                                  producer->next());
      cast->SetInt("to", static_cast<int64_t>(to));
      back = cast->output(0);
      casts_back_.push_back(cast);
      Set(*back, to, to);
      fp32_of_[value] = back;
      ++casts_;
      for (const Use& use : uses) {
        if (move_readers) graph_.SetInput(use.node, static_cast<size_t>(use.input_index), back);
      }
    }
    low_of_[back] = value;
    for (size_t i : outputs) graph_.SetOutput(i, back);
    if (type) {
      Retype(back, to, *type, names);
      Retype(value, low_, *type, names);
    }
    return Status::Ok();
  }

  // Erases the Casts back that nothing reads (a low op's output read only by low ops).
  Status EraseUnreadCastsBack() {
    for (Node* cast : casts_back_) {
      const Value* back = cast->output(0);
      if (!back->users().empty() || back->is_graph_output()) continue;
      ZG_RETURN_IF_ERROR(graph_.EraseNode(cast));
      --casts_;
    }
    return Status::Ok();
  }

  // Records `value`'s new dtype in its recorded type, if it has one, keeping dims and their names.
  void Retype(Value* value, DataType dtype, const TensorType& type,
              const std::vector<std::string>& dim_names) {
    graph_.SetValueType(value, TensorType{dtype, type.dims});
    for (size_t i = 0; i < dim_names.size(); ++i) {
      if (!dim_names[i].empty()) graph_.SetDimParam(value, i, dim_names[i]);
    }
  }

  void RetypeOutput(Value* value) {
    Set(*value, original(*value), low_);
    if (const std::optional<TensorType> type = value->type()) {
      const std::vector<std::string_view> params = value->dim_params();
      Retype(value, low_, *type, std::vector<std::string>(params.begin(), params.end()));
    }
  }

 private:
  Graph& graph_;
  const DataType low_;
  int64_t& casts_;
  std::vector<DataType> dtypes_;
  std::vector<DataType> originals_;
  std::unordered_map<Value*, Value*> low_of_;
  std::unordered_map<Value*, Value*> fp32_of_;
  std::vector<Node*> casts_back_;
};

// The formal of node output `index`: the last one when it is variadic.
const OpFormal* OutputFormal(const OpContract& contract, size_t index) {
  if (index < contract.outputs.size()) return &contract.outputs[index];
  if (!contract.outputs.empty() && contract.outputs.back().arity >= OpFormal::Arity::kVariadic) {
    return &contract.outputs.back();
  }
  return nullptr;
}

// Which inputs and outputs of a node change to the low dtype when it computes in it.
struct LowPlan {
  std::vector<size_t> inputs;
  std::vector<size_t> outputs;
  // An output's type variable would have changed, but its constraint does not allow `low`.
  bool not_allowed = false;
  bool empty() const { return inputs.empty() || outputs.empty(); }
};

// The float32 inputs and outputs typed by a type variable that both a float32 operand (not read
// on the host) and a float32 output have, when the contract allows `low` for it: MatMul's A, B and
// Y; LayerNormalization's X, Scale, B and Y but not its statistics (U); not Dropout's ratio (T1).
LowPlan PlanLow(const Rewriter& rewriter, const Node& node, DataType low) {
  LowPlan plan;
  const OpContract* contract = node.contract();
  if (contract == nullptr) return plan;
  std::set<std::string_view> in_vars, shared;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const OpFormal* formal = contract->InputFormal(i);
    const Value* input = node.input(i);
    if (formal != nullptr && !formal->type.empty() && !formal->host && input != nullptr &&
        rewriter.original(*input) == kF32) {
      in_vars.insert(formal->type);
    }
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    const OpFormal* formal = OutputFormal(*contract, i);
    const Value* output = node.output(i);
    if (formal == nullptr || output == nullptr || rewriter.original(*output) != kF32 ||
        !in_vars.contains(formal->type)) {
      continue;
    }
    const TypeConstraint* constraint = contract->FindConstraint(formal->type);
    if (constraint != nullptr &&
        std::ranges::find(constraint->allowed, low) != constraint->allowed.end()) {
      shared.insert(formal->type);
      plan.outputs.push_back(i);
    } else {
      plan.not_allowed = true;
    }
  }
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const OpFormal* formal = contract->InputFormal(i);
    const Value* input = node.input(i);
    if (formal != nullptr && !formal->host && input != nullptr &&
        rewriter.original(*input) == kF32 && shared.contains(formal->type)) {
      plan.inputs.push_back(i);
    }
  }
  return plan;
}

// Initializers read on the host somewhere (Reshape's shape, Resize's scales): they keep their
// dtype.
std::set<const Value*> HostReadValues(const Graph& graph) {
  std::set<const Value*> host;
  for (const Node* node : graph.nodes()) {
    if (node->contract() == nullptr) continue;
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      if (node->input(i) != nullptr && node->contract()->IsHostInput(i))
        host.insert(node->input(i));
    }
  }
  return host;
}

}  // namespace

std::vector<std::string> AmpPass::DefaultLowOps() { return {"MatMul", "Gemm", "FusedMatMul"}; }

std::vector<std::string> AmpPass::DefaultFp32Ops() {
  return {"LayerNormalization",
          "SimplifiedLayerNormalization",
          "Softmax",
          "LogSoftmax",
          "ReduceSum",
          "ReduceMean",
          "ReduceSumSquare",
          "ReduceL1",
          "ReduceL2",
          "ReduceLogSum",
          "ReduceLogSumExp",
          "ReduceProd",
          "SoftmaxCrossEntropyLoss",
          "NegativeLogLikelihoodLoss",
          "Exp",
          "Log",
          "Pow",
          "Reciprocal"};
}

std::optional<DataType> AmpDtypeFromName(std::string_view name) {
  if (name == "bf16" || name == "bfloat16") return DataType::kBFloat16;
  if (name == "fp16" || name == "float16") return DataType::kFloat16;
  return std::nullopt;
}

std::optional<AmpPass::Level> AmpLevelFromName(std::string_view name) {
  if (name == "O1") return AmpPass::Level::kO1;
  if (name == "O2") return AmpPass::Level::kO2;
  return std::nullopt;
}

StatusOr<bool> AmpPass::RunImpl(Graph& graph) {
  stats_ = Stats();
  const DataType low = options_.low;
  const bool o2 = options_.level == Level::kO2;
  ZG_RETURN_IF_NOT(low == DataType::kBFloat16 || low == DataType::kFloat16,
                   "AMP's low dtype must be bfloat16 or float16, not ", DataTypeName(low));
  ZG_RETURN_IF_NOT(!DeclaredLoss(graph),
                   "--amp: the graph already is a training graph (it has zerograph.loss); it "
                   "applies to forward graphs");
  ZG_RETURN_IF_ERROR(CheckOpNames(options_.low_ops, "--amp-low-ops"));
  ZG_RETURN_IF_ERROR(CheckOpNames(options_.fp32_ops, "--amp-fp32-ops"));
  const std::set<std::string_view> listed =
      o2 ? std::set<std::string_view>(options_.fp32_ops.begin(), options_.fp32_ops.end())
         : std::set<std::string_view>(options_.low_ops.begin(), options_.low_ops.end());

  // The forward graph's dtypes, inferred where value_info does not record them.
  Rewriter rewriter(graph, low, stats_.casts);
  {
    ZG_ASSIGN_OR_RETURN(autodiff::ValueShapes shapes, autodiff::ValueShapes::Infer(graph));
    auto record = [&](const Value* value) {
      if (value != nullptr) rewriter.Set(*value, shapes.dtype(*value), shapes.dtype(*value));
    };
    for (const Value* input : graph.inputs()) record(input);
    for (const Value* init : graph.initializers()) record(init);
    for (const Node* node : graph.nodes()) {
      for (const Value* output : node->outputs()) record(output);
    }
  }

  if (o2) {
    // Each float32 initializer is replaced by one of the same name in the low dtype. The name is
    // freed first: readers move to a placeholder while the old one is erased.
    const std::set<const Value*> host = HostReadValues(graph);
    Value* placeholder = nullptr;
    for (Value* init : graph.initializers()) {
      if (rewriter.original(*init) != kF32 || init->is_graph_input() || host.contains(init)) {
        continue;
      }
      ZG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, init->initializer()->Bytes());
      ZG_ASSIGN_OR_RETURN(std::string narrow, ConvertFloatElements(bytes, kF32, low));
      const std::string name(init->name());
      const std::vector<int64_t> dims(init->initializer()->dims().begin(),
                                      init->initializer()->dims().end());
      if (placeholder == nullptr) {
        placeholder = graph.AddInitializer(graph.UniqueValueName("amp_placeholder"), kF32, {},
                                           std::string(sizeof(float), '\0'));
      }
      stats_.bytes_before += static_cast<int64_t>(bytes.size());
      stats_.bytes_after += static_cast<int64_t>(narrow.size());
      graph.ReplaceAllUsesWith(init, placeholder);
      ZG_RETURN_IF_ERROR(graph.EraseInitializer(init));
      Value* converted = graph.AddInitializer(name, low, dims, std::move(narrow));
      graph.ReplaceAllUsesWith(placeholder, converted);
      rewriter.Set(*converted, kF32, low);
      ++stats_.initializers;
    }
    if (placeholder != nullptr) ZG_RETURN_IF_ERROR(graph.EraseInitializer(placeholder));
  }

  std::vector<Node*> forward(graph.nodes().begin(), graph.nodes().end());
  for (Node* node : forward) {
    // Cast reads any dtype and writes the one it names: nothing to do.
    if (node->op_type() == "Cast" && node->domain().empty()) continue;
    const LowPlan plan = PlanLow(rewriter, *node, low);
    bool run_low = false;
    const std::string op(node->op_type());
    if (plan.empty() && plan.not_allowed && listed.contains(op) != o2) {
      ++stats_.not_allowed[op];
    } else if (!plan.empty()) {
      if (listed.contains(op) != o2) {
        run_low = !options_.has_kernel || options_.has_kernel(*node, low);
        if (!run_low) ++stats_.no_kernel[op];
      } else if (o2) {
        ++stats_.fp32_listed[op];
      }
    }
    if (run_low) {
      ++stats_.low_nodes;
      for (size_t i : plan.inputs) graph.SetInput(node, i, rewriter.In(node->input(i), low, node));
      for (size_t i : plan.outputs) {
        rewriter.RetypeOutput(node->output(i));
        if (!o2) ZG_RETURN_IF_ERROR(rewriter.CastBack(node->output(i), /*move_readers=*/true));
      }
    }
    // Every other input is read as before (a low node's too: its ratio, its host-read shape).
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      Value* input = node->input(i);
      if (input != nullptr && rewriter.dtype(*input) != rewriter.original(*input) &&
          !(run_low && std::ranges::find(plan.inputs, i) != plan.inputs.end())) {
        graph.SetInput(node, i, rewriter.In(input, rewriter.original(*input), node));
      }
    }
  }

  // Graph outputs keep their declared dtype (O1's low values were cast back where made).
  std::vector<Value*> outputs = graph.outputs();
  for (Value* output : outputs) {
    if (rewriter.dtype(*output) != rewriter.original(*output) && output->producer() != nullptr) {
      ZG_RETURN_IF_ERROR(rewriter.CastBack(output, /*move_readers=*/false));
    }
  }
  ZG_RETURN_IF_ERROR(rewriter.EraseUnreadCastsBack());
  return stats_.low_nodes > 0 || stats_.initializers > 0;
}

std::string AmpPass::StatsString() const {
  std::string text =
      StrCat("nodes computing in low precision: ", stats_.low_nodes,
             "\ncasts inserted: ", stats_.casts, "\ninitializers converted: ", stats_.initializers,
             " (", stats_.bytes_before, " bytes -> ", stats_.bytes_after, ")\n");
  for (const auto& [op, count] : stats_.fp32_listed) {
    text += StrCat("left float32: ", count, " ", op, " (on the float32 list)\n");
  }
  for (const auto& [op, count] : stats_.no_kernel) {
    text += StrCat("left float32: ", count, " ", op, " (no CPU kernel for the low dtype)\n");
  }
  for (const auto& [op, count] : stats_.not_allowed) {
    text += StrCat("left float32: ", count, " ", op,
                   " (its op contract does not allow the low dtype)\n");
  }
  return text;
}

}  // namespace zerograph
