#include "zerograph/ir/training_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

// A one-layer regression step: p = x w; loss = mean((p - y)^2); w.new = SGD(lr, w, x^T (p - y)).
std::unique_ptr<Graph> MakeGraph() {
  auto graph = std::make_unique<Graph>();
  GraphBuilder b(*graph);
  Value* x = b.Input("x", kF32, {2, 3});
  Value* y = b.Input("y", kF32, {2, 3});
  Value* lr = b.Input("lr", kF32, {});
  b.Input("step", DataType::kInt64, {});
  const std::vector<float> init(9, 0.5f);
  Value* w = b.Initializer("w", {3, 3}, init);
  Value* p = b.Op("MatMul", {x, w}, "p");
  Value* d = b.Op("Sub", {p, y}, "d");
  Value* sq = b.Op("Mul", {d, d}, "sq");
  b.SetRole(OpRole::kForward, true);
  Value* loss = b.SetType(b.Op("ReduceMean", {sq}, "loss", {Attr("keepdims", 0)}), kF32, {});
  b.SetRole(OpRole::kBackward);
  Value* grad = b.Op("Gemm", {x, d}, "w.grad", {Attr("transA", 1)});
  b.SetRole(OpRole::kOptimize);
  Value* w_new = b.SetType(b.Op({kZerographDomain, "SGD"}, {lr, w, grad}, "w.new"), kF32, {3, 3});
  b.Output(loss);
  b.Output(w_new);
  return graph;
}

void SetGoodMetadata(Graph& graph) {
  graph.SetMetadata("zerograph.format_version", "1");
  graph.SetMetadata("zerograph.loss", "loss");
  graph.SetMetadata("zerograph.inputs", R"({"data": ["x", "y"], "lr": "lr", "step": "step"})");
  graph.SetMetadata("zerograph.state_binding", R"({"w.new": "w"})");
}

// The status of reading a graph whose metadata is good except that `key` is `value`.
Status ReadWith(const std::string& key, const std::string& value) {
  std::unique_ptr<Graph> graph = MakeGraph();
  SetGoodMetadata(*graph);
  graph->SetMetadata(key, value);
  return ReadTrainingSpec(*graph).status();
}

MATCHER_P2(IsInvalidArgument, key, name, "") {
  return arg.code() == StatusCode::kInvalidArgument &&
         arg.message().find(key) != std::string_view::npos &&
         arg.message().find(name) != std::string_view::npos;
}

// A model without zerograph.* keys is no training graph, and that is not an error.
TEST(TrainingSpecTest, NoMetadataIsNoSpec) {
  std::unique_ptr<Graph> graph = MakeGraph();
  graph->SetMetadata("producer.note", "unrelated");
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_FALSE(spec->has_value());
}

// Every field of good metadata is read, the binding in file order.
TEST(TrainingSpecTest, ReadsGoodMetadata) {
  std::unique_ptr<Graph> graph = MakeGraph();
  SetGoodMetadata(*graph);
  StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_TRUE(spec->has_value());
  const TrainingSpec& s = **spec;
  EXPECT_EQ(s.loss, "loss");
  EXPECT_EQ(s.data_inputs, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(s.lr_input, "lr");
  EXPECT_EQ(s.step_input, "step");
  ASSERT_EQ(s.state_binding.size(), 1u);
  EXPECT_EQ(s.state_binding[0], (std::pair<std::string, std::string>{"w.new", "w"}));
  EXPECT_FALSE(s.nranks.has_value());
  EXPECT_FALSE(s.layout.has_value());
}

// A binding spelled with spaces, newlines or JSON escapes reads as the compact one does (plain
// printable names take a fast path, anything else the general JSON reader).
TEST(TrainingSpecTest, BindingSpellingsReadAlike) {
  const std::vector<std::pair<std::string, std::string>> expected = {{"w.new", "w"}};
  for (const char* text :
       {R"({"w.new":"w"})", "{\n  \"w.new\" :\t\"w\"\n}\n", R"({"w\u002enew": "\u0077"})"}) {
    std::unique_ptr<Graph> graph = MakeGraph();
    SetGoodMetadata(*graph);
    graph->SetMetadata("zerograph.state_binding", text);
    StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status().ToString();
    EXPECT_EQ((*spec)->state_binding, expected) << text;
  }
  for (const char* text : {"{}", " { }\n"}) {
    std::unique_ptr<Graph> graph = MakeGraph();
    SetGoodMetadata(*graph);
    graph->SetMetadata("zerograph.state_binding", text);
    StatusOr<std::optional<TrainingSpec>> spec = ReadTrainingSpec(*graph);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status().ToString();
    EXPECT_TRUE((*spec)->state_binding.empty()) << text;
  }
}

// The resolved spec gives each binding entry's values, from either reader, with the names copied,
// viewed or left out; the views are the names, decoded where the text escapes them.
TEST(TrainingSpecTest, ResolvedBindingGivesTheValues) {
  using NamePair = std::pair<std::string_view, std::string_view>;
  for (const char* text : {R"({"w.new":"w"})", R"({"w\u002enew": "w"})"}) {
    for (const BindingNames names :
         {BindingNames::kCopied, BindingNames::kViewed, BindingNames::kNone}) {
      std::unique_ptr<Graph> graph = MakeGraph();
      SetGoodMetadata(*graph);
      graph->SetMetadata("zerograph.state_binding", text);
      StatusOr<std::optional<ResolvedTrainingSpec>> resolved =
          ReadResolvedTrainingSpec(*graph, names);
      ASSERT_TRUE(resolved.ok()) << text << ": " << resolved.status().ToString();
      // Moved, as a pass keeps it: the views must still hold.
      const ResolvedTrainingSpec spec = std::move(**resolved);
      EXPECT_EQ(spec.binding_new_values, std::vector<const Value*>{graph->FindValue("w.new")});
      EXPECT_EQ(spec.binding_old_values, std::vector<const Value*>{graph->FindValue("w")});
      EXPECT_EQ(spec.spec.state_binding.size(), names == BindingNames::kCopied ? 1u : 0u) << text;
      const std::vector<NamePair> viewed(spec.binding_names.entries().begin(),
                                         spec.binding_names.entries().end());
      std::vector<NamePair> expected;
      if (names == BindingNames::kViewed) expected = {{"w.new", "w"}};
      EXPECT_EQ(viewed, expected) << text;
      EXPECT_EQ(spec.spec.loss, "loss");
    }
  }
}

// MakeGraph with `n` more parameters p<i>, each with a constant c<i> beside it (bound to nothing)
// and its own SGD update, the updates made graph outputs in `output_order`.
std::unique_ptr<Graph> MakeGraphWithParameters(int n, const std::vector<int>& output_order) {
  std::unique_ptr<Graph> graph = MakeGraph();
  GraphBuilder b(*graph);
  Value* lr = graph->FindValue("lr");
  std::vector<Value*> updated;
  for (int i = 0; i < n; ++i) {
    Value* p = b.Initializer(StrCat("p", i), {2}, std::vector<float>{1, 2});
    b.Initializer(StrCat("c", i), {1}, std::vector<float>{3});
    Value* grad = b.Op("Identity", {p}, StrCat("p", i, ".grad"));
    updated.push_back(b.Op({kZerographDomain, "SGD"}, {lr, p, grad}, StrCat("p", i, ".new")));
  }
  for (const int i : output_order) b.Output(updated[static_cast<size_t>(i)]);
  return graph;
}

// Where a binding lists its entries in the order of the graph's outputs and initializers, the
// reader finds them by walking those lists; in any other order (reversed, shuffled, in blocks, the
// outputs listed against their making), by looking the names up. Every order gives each entry's
// own values.
TEST(TrainingSpecTest, ResolvesABindingInAnyOrder) {
  constexpr int kParameters = 300;
  std::vector<int> in_order(kParameters);
  for (int i = 0; i < kParameters; ++i) in_order[static_cast<size_t>(i)] = i;
  std::vector<int> reversed(in_order.rbegin(), in_order.rend());
  std::vector<int> shuffled = in_order;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(16));
  std::vector<int> halves_swapped(in_order.begin() + kParameters / 2, in_order.end());
  halves_swapped.insert(halves_swapped.end(), in_order.begin(), in_order.begin() + kParameters / 2);
  const std::vector<std::pair<std::vector<int>, std::vector<int>>> cases = {
      {in_order, in_order},       {in_order, reversed}, {in_order, shuffled},
      {in_order, halves_swapped}, {reversed, reversed}, {reversed, in_order}};
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& [output_order, binding_order] = cases[c];
    std::unique_ptr<Graph> graph = MakeGraphWithParameters(kParameters, output_order);
    SetGoodMetadata(*graph);
    std::string binding = R"({"w.new": "w")";
    std::vector<std::pair<std::string, std::string>> names = {{"w.new", "w"}};
    for (const int i : binding_order) {
      names.emplace_back(StrCat("p", i, ".new"), StrCat("p", i));
      binding += StrCat(R"(, ")", names.back().first, R"(": ")", names.back().second, R"(")");
    }
    graph->SetMetadata("zerograph.state_binding", binding + "}");
    StatusOr<std::optional<ResolvedTrainingSpec>> resolved =
        ReadResolvedTrainingSpec(*graph, BindingNames::kNone);
    ASSERT_TRUE(resolved.ok()) << "case " << c << ": " << resolved.status().ToString();
    const ResolvedTrainingSpec& spec = **resolved;
    ASSERT_EQ(spec.binding_new_values.size(), names.size()) << "case " << c;
    ASSERT_EQ(spec.binding_old_values.size(), names.size()) << "case " << c;
    for (size_t k = 0; k < names.size(); ++k) {
      EXPECT_EQ(spec.binding_new_values[k], graph->FindValue(names[k].first))
          << "case " << c << ", entry " << k;
      EXPECT_EQ(spec.binding_old_values[k], graph->FindValue(names[k].second))
          << "case " << c << ", entry " << k;
    }
  }
}

// The binding given apart (the names a pass keeps and adds, as views) is written, not the spec's.
TEST(TrainingSpecTest, WritesTheBindingGivenApart) {
  std::unique_ptr<Graph> graph = MakeGraph();
  SetGoodMetadata(*graph);
  TrainingSpec spec;
  spec.loss = "loss";
  spec.state_binding = {{"ignored", "ignored"}};
  const std::pair<std::string_view, std::string_view> binding[] = {{"w.new", "w"}};
  WriteTrainingSpec(spec, binding, *graph);
  EXPECT_EQ(graph->GetMetadata("zerograph.state_binding"), R"({"w.new":"w"})");
}

// What WriteTrainingSpec writes, ReadTrainingSpec reads back unchanged.
TEST(TrainingSpecTest, WriteThenReadRoundTrips) {
  std::unique_ptr<Graph> graph = MakeGraph();
  TrainingSpec spec;
  spec.loss = "loss";
  spec.data_inputs = {"y", "x"};
  spec.lr_input = "lr";
  spec.step_input = "step";
  spec.state_binding = {{"w.new", "w"}};
  spec.nranks = 2;
  spec.layout = R"({"buckets": []})";
  WriteTrainingSpec(spec, *graph);
  EXPECT_EQ(graph->GetMetadata("zerograph.format_version"), "1");
  StatusOr<std::optional<TrainingSpec>> read = ReadTrainingSpec(*graph);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->loss, spec.loss);
  EXPECT_EQ((*read)->data_inputs, spec.data_inputs);
  EXPECT_EQ((*read)->lr_input, spec.lr_input);
  EXPECT_EQ((*read)->step_input, spec.step_input);
  EXPECT_EQ((*read)->state_binding, spec.state_binding);
  EXPECT_EQ((*read)->nranks, spec.nranks);
  EXPECT_EQ((*read)->layout, spec.layout);
}

// lr and step may be left out (an SGD graph needs no step).
TEST(TrainingSpecTest, AcceptsInputsWithoutLrAndStep) {
  EXPECT_TRUE(ReadWith("zerograph.inputs", R"({"data": ["x"]})").ok());
}

// Other zerograph keys without the loss: the graph is meant for training but says not what.
TEST(TrainingSpecTest, RejectsMissingLoss) {
  std::unique_ptr<Graph> graph = MakeGraph();
  graph->SetMetadata("zerograph.format_version", "1");
  graph->SetMetadata("zerograph.inputs", R"({"data": ["x"]})");
  EXPECT_THAT(ReadTrainingSpec(*graph).status(), IsInvalidArgument("zerograph.loss", "missing"));
}

TEST(TrainingSpecTest, RejectsMissingFormatVersion) {
  std::unique_ptr<Graph> graph = MakeGraph();
  graph->SetMetadata("zerograph.loss", "loss");
  EXPECT_THAT(ReadTrainingSpec(*graph).status(),
              IsInvalidArgument("zerograph.format_version", "missing"));
}

TEST(TrainingSpecTest, RejectsUnknownFormatVersion) {
  EXPECT_THAT(ReadWith("zerograph.format_version", "2"),
              IsInvalidArgument("zerograph.format_version", "'2'"));
}

// A misspelt key would otherwise be silently ignored.
TEST(TrainingSpecTest, RejectsUnknownKey) {
  EXPECT_THAT(ReadWith("zerograph.state_bindings", "{}"),
              IsInvalidArgument("zerograph.state_bindings", "unknown"));
}

TEST(TrainingSpecTest, RejectsLossThatIsNoValue) {
  EXPECT_THAT(ReadWith("zerograph.loss", "nope"), IsInvalidArgument("zerograph.loss", "'nope'"));
}

TEST(TrainingSpecTest, RejectsLossThatIsNotAGraphOutput) {
  EXPECT_THAT(ReadWith("zerograph.loss", "sq"),
              IsInvalidArgument("zerograph.loss", "'sq' is not a graph output"));
}

// w.new is a graph output, but not a scalar.
TEST(TrainingSpecTest, RejectsLossThatIsNotAScalar) {
  EXPECT_THAT(ReadWith("zerograph.loss", "w.new"),
              IsInvalidArgument("zerograph.loss", "float scalar"));
}

TEST(TrainingSpecTest, RejectsMalformedJson) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x")"),
              IsInvalidArgument("zerograph.inputs", "not valid JSON"));
  EXPECT_THAT(ReadWith("zerograph.state_binding", "w.new=w"),
              IsInvalidArgument("zerograph.state_binding", "not valid JSON"));
}

TEST(TrainingSpecTest, RejectsWrongJsonTypes) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"(["x", "y"])"),
              IsInvalidArgument("zerograph.inputs", "JSON object"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": "x"})"),
              IsInvalidArgument("zerograph.inputs", "'data' must be an array"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": [1]})"),
              IsInvalidArgument("zerograph.inputs", "must be a string"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": [], "lr": 0.1})"),
              IsInvalidArgument("zerograph.inputs", "'lr' must be a string"));
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"(["w.new", "w"])"),
              IsInvalidArgument("zerograph.state_binding", "JSON object"));
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"w.new": 3})"),
              IsInvalidArgument("zerograph.state_binding", "'w.new' must be a string"));
}

TEST(TrainingSpecTest, RejectsUnknownInputsField) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x"], "labels": ["y"]})"),
              IsInvalidArgument("zerograph.inputs", "'labels'"));
}

// Data inputs are fed each step: an initializer or a computed value cannot be one.
TEST(TrainingSpecTest, RejectsDataThatIsNotAGraphInput) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x", "w"]})"),
              IsInvalidArgument("zerograph.inputs", "'w' is not a graph input"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["p"]})"),
              IsInvalidArgument("zerograph.inputs", "'p' is not a graph input"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["nope"]})"),
              IsInvalidArgument("zerograph.inputs", "'nope' is no value"));
}

TEST(TrainingSpecTest, RejectsLrOrStepThatIsNotAGraphInput) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x"], "lr": "loss"})"),
              IsInvalidArgument("zerograph.inputs", "lr input 'loss'"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x"], "step": "w"})"),
              IsInvalidArgument("zerograph.inputs", "step input 'w'"));
}

// step must be an int64 scalar, lr a float scalar.
TEST(TrainingSpecTest, RejectsLrOrStepOfTheWrongType) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x"], "step": "lr"})"),
              IsInvalidArgument("zerograph.inputs", "int64 scalar"));
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["y"], "lr": "x"})"),
              IsInvalidArgument("zerograph.inputs", "float scalar"));
}

TEST(TrainingSpecTest, RejectsAnInputListedTwice) {
  EXPECT_THAT(ReadWith("zerograph.inputs", R"({"data": ["x", "x"]})"),
              IsInvalidArgument("zerograph.inputs", "'x' is listed twice"));
}

TEST(TrainingSpecTest, RejectsBindingOfUnknownValues) {
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"nope": "w"})"),
              IsInvalidArgument("zerograph.state_binding", "'nope'"));
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"w.new": "nope"})"),
              IsInvalidArgument("zerograph.state_binding", "'nope'"));
}

// Only initializers hold state; only graph outputs survive the step.
TEST(TrainingSpecTest, RejectsBindingThatIsNotOutputToInitializer) {
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"w.new": "x"})"),
              IsInvalidArgument("zerograph.state_binding", "'x', which is not an initializer"));
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"w.grad": "w"})"),
              IsInvalidArgument("zerograph.state_binding", "'w.grad' is not a graph output"));
}

TEST(TrainingSpecTest, RejectsBindingWithDuplicateKeysOrTargets) {
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"w.new": "w", "w.new": "w"})"),
              IsInvalidArgument("zerograph.state_binding", "'w.new' twice"));
  EXPECT_THAT(ReadWith("zerograph.state_binding", R"({"w.new": "w", "loss": "w"})"),
              IsInvalidArgument("zerograph.state_binding", "'w' is replaced by two values"));
}

TEST(TrainingSpecTest, RejectsBadNranks) {
  for (const char* text : {"0", "-2", "two", "2x", ""}) {
    EXPECT_THAT(ReadWith("zerograph.nranks", text),
                IsInvalidArgument("zerograph.nranks", "positive"))
        << text;
  }
  EXPECT_TRUE(ReadWith("zerograph.nranks", "8").ok());
}

TEST(TrainingSpecTest, RejectsMalformedLayout) {
  EXPECT_THAT(ReadWith("zerograph.layout", "{"), IsInvalidArgument("zerograph.layout", "JSON"));
  EXPECT_THAT(ReadWith("zerograph.layout", "[]"), IsInvalidArgument("zerograph.layout", "object"));
}

}  // namespace
}  // namespace zerograph
