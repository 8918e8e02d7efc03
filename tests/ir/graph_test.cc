#include "zerograph/ir/graph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <onnx/onnx_pb.h>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/proto_store.h"
#include "zerograph/ir/verify.h"

namespace zerograph {
namespace {

TensorType Float(std::vector<int64_t> dims) { return TensorType{DataType::kFloat32, dims}; }

std::vector<std::string> Schedule(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node* node : graph.nodes()) names.emplace_back(node->name());
  return names;
}

class GraphTest : public ::testing::Test {
 protected:
  // x -> a: Relu -> b: Neg -> c: Abs, with y = c the graph output.
  void SetUp() override {
    x_ = graph_.AddInput("x", Float({4}));
    a_ = graph_.AddNode("Relu", "", {x_}, {"a.out"}, "a");
    b_ = graph_.AddNode("Neg", "", {a_->output(0)}, {"b.out"}, "b");
    c_ = graph_.AddNode("Abs", "", {b_->output(0)}, {"c.out"}, "c");
    graph_.AddOutput(c_->output(0));
  }

  Graph graph_;
  Value* x_ = nullptr;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
  Node* c_ = nullptr;
};

// Building links producers, users and the schedule.
TEST_F(GraphTest, BuildLinksEdges) {
  EXPECT_EQ(Schedule(graph_), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(a_->output(0)->producer(), a_);
  ASSERT_EQ(a_->output(0)->users().size(), 1u);
  EXPECT_EQ(a_->output(0)->users()[0].node, b_);
  EXPECT_TRUE(a_->IsBefore(*c_));
  EXPECT_FALSE(c_->IsBefore(*a_));
  EXPECT_EQ(graph_.FindValue("b.out"), b_->output(0));
  EXPECT_EQ(graph_.FindNode("c"), c_);
  EXPECT_TRUE(c_->output(0)->is_graph_output());
  EXPECT_TRUE(Verify(graph_).ok());
}

// Taken names get a numeric suffix instead of breaking SSA.
TEST_F(GraphTest, NamesAreMadeUnique) {
  Node* again = graph_.AddNode("Relu", "", {x_}, {"a.out"}, "a");
  EXPECT_EQ(again->name(), "a_1");
  EXPECT_EQ(again->output(0)->name(), "a.out_1");
  EXPECT_TRUE(Verify(graph_).ok());
}

// Moving nodes keeps "is before" consistent with the schedule.
TEST_F(GraphTest, MoveUpdatesOrder) {
  Node* d = graph_.AddNode("Relu", "", {x_}, {"d.out"}, "d");
  graph_.MoveBefore(d, a_);
  EXPECT_EQ(Schedule(graph_), (std::vector<std::string>{"d", "a", "b", "c"}));
  EXPECT_TRUE(d->IsBefore(*a_));
  graph_.MoveAfter(d, b_);
  EXPECT_EQ(Schedule(graph_), (std::vector<std::string>{"a", "b", "d", "c"}));
  EXPECT_TRUE(b_->IsBefore(*d));
  EXPECT_TRUE(d->IsBefore(*c_));
  graph_.MoveAfter(d, c_);
  EXPECT_EQ(graph_.last_node(), d);
  EXPECT_TRUE(Verify(graph_).ok());
}

// Thousands of insertions at one point force relabelling; order stays a strict total order.
TEST_F(GraphTest, RepeatedInsertionAtOnePointRelabels) {
  std::vector<Node*> inserted;
  for (int i = 0; i < 5000; ++i) {
    inserted.push_back(graph_.AddNode("Relu", "", {x_}, {"r"}, "r", b_));
  }
  // Each insertion went right before b, so they run in creation order between a and b.
  EXPECT_TRUE(a_->IsBefore(*inserted.front()));
  for (size_t i = 1; i < inserted.size(); ++i) {
    ASSERT_TRUE(inserted[i - 1]->IsBefore(*inserted[i])) << i;
  }
  EXPECT_TRUE(inserted.back()->IsBefore(*b_));
  EXPECT_TRUE(Verify(graph_).ok());
}

// Rewiring inputs updates users on both sides.
TEST_F(GraphTest, SetInputAndReplaceAllUses) {
  graph_.SetInput(c_, 0, a_->output(0));
  EXPECT_TRUE(b_->output(0)->users().empty());
  EXPECT_EQ(a_->output(0)->users().size(), 2u);
  graph_.ReplaceAllUsesWith(a_->output(0), x_);
  EXPECT_TRUE(a_->output(0)->users().empty());
  EXPECT_EQ(x_->users().size(), 3u);
  EXPECT_EQ(c_->input(0), x_);
  EXPECT_TRUE(Verify(graph_).ok());
}

// A graph output follows ReplaceAllUsesWith; erasing a still-read node is refused.
TEST_F(GraphTest, EraseRequiresNoUsers) {
  EXPECT_FALSE(graph_.EraseNode(b_).ok());
  Node* d = graph_.AddNode("Neg", "", {c_->output(0)}, {"d.out"}, "d");
  graph_.ReplaceAllUsesWith(c_->output(0), d->output(0));
  // d now reads itself through c's replacement; point it back at c.
  graph_.SetInput(d, 0, c_->output(0));
  EXPECT_EQ(graph_.outputs()[0], d->output(0));
  EXPECT_FALSE(graph_.EraseNode(d).ok());
  graph_.SetOutput(0, c_->output(0));
  ASSERT_TRUE(graph_.EraseNode(d).ok());
  EXPECT_EQ(graph_.num_nodes(), 3u);
  EXPECT_EQ(graph_.FindValue("d.out"), nullptr);
  EXPECT_EQ(graph_.FindNode("d"), nullptr);
  EXPECT_TRUE(Verify(graph_).ok());
}

// Initializers are erased in bulk in order; one still read stops the erasing, named, with those
// before it gone and those after it kept. Enough of them that the erasing runs ahead of itself.
TEST_F(GraphTest, EraseInitializersStopsAtOneStillRead) {
  std::vector<Value*> states;
  for (int i = 0; i < 40; ++i) {
    states.push_back(graph_.AddInitializer(StrCat("s", i), DataType::kFloat32,
                                           std::vector<int64_t>{1}, std::string(4, '\0')));
  }
  Node* reader = graph_.AddNode("Neg", "", {states[30]}, {"r.out"}, "r");
  graph_.AddOutput(reader->output(0));
  const Status erased = graph_.EraseInitializers(states);
  ASSERT_FALSE(erased.ok());
  EXPECT_NE(erased.message().find("'s30': it is still read"), std::string::npos)
      << erased.ToString();
  EXPECT_EQ(graph_.FindValue("s0"), nullptr);
  EXPECT_EQ(graph_.FindValue("s29"), nullptr);
  EXPECT_EQ(graph_.FindValue("s30"), states[30]);
  EXPECT_EQ(graph_.FindValue("s39"), states[39]);
  const std::vector<Value*> rest(states.begin() + 31, states.end());
  ASSERT_TRUE(graph_.EraseInitializers(rest).ok());
  EXPECT_EQ(graph_.FindValue("s39"), nullptr);
  EXPECT_TRUE(Verify(graph_).ok());
}

// The ops a graph has met are those of its nodes, erased ones included, by domain and type.
TEST_F(GraphTest, HasMetOpKnowsTheNodesOps) {
  EXPECT_TRUE(graph_.HasMetOp("", "Relu"));
  EXPECT_FALSE(graph_.HasMetOp("", "Sigmoid"));
  EXPECT_FALSE(graph_.HasMetOp("com.example", "Relu"));
  Node* extra = graph_.AddNode("Sigmoid", "com.example", {x_}, {"e.out"}, "e");
  ASSERT_TRUE(graph_.EraseNode(extra).ok());
  EXPECT_TRUE(graph_.HasMetOp("com.example", "Sigmoid"));
  EXPECT_FALSE(graph_.HasMetOp("", "Sigmoid"));
}

// A bulk search finds each name where it stands, also when it is large enough to be shared out in
// slices on threads (a training graph's outputs): names of values and of nodes, missing names and
// repeated ones among them.
TEST_F(GraphTest, BulkSearchesFindEachNameOfALargeBatch) {
  constexpr int kValues = 70000;
  std::vector<std::string> names;
  Value* previous = c_->output(0);
  for (int i = 0; i < kValues; ++i) {
    previous = graph_.AddNode("Neg", "", {previous}, {StrCat("v", i)}, StrCat("n", i))->output(0);
  }
  for (int i = kValues - 1; i >= 0; --i) {
    names.push_back(StrCat("v", i));
    if (i % 1000 == 0) names.push_back(StrCat("missing", i));
  }
  names.push_back("v7");
  const std::vector<std::string_view> views(names.begin(), names.end());
  const std::vector<Value*> values = graph_.FindValues(views);
  ASSERT_EQ(values.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_EQ(values[i], graph_.FindValue(names[i])) << names[i];
    ASSERT_EQ(values[i] == nullptr, names[i].starts_with("missing")) << names[i];
  }
  std::vector<std::string_view> node_names;
  for (int i = kValues - 1; i >= 0; --i) {
    node_names.push_back(graph_.FindValue(StrCat("v", i))->producer()->name());
  }
  const std::vector<Node*> nodes = graph_.FindNodes(node_names);
  ASSERT_EQ(nodes.size(), node_names.size());
  for (size_t i = 0; i < node_names.size(); ++i) {
    ASSERT_NE(nodes[i], nullptr);
    ASSERT_EQ(nodes[i], graph_.FindNode(node_names[i]));
  }
}

// stored_nodes() gives the live nodes in the order they were made, whatever the schedule, and its
// slices split them without gap or overlap.
TEST_F(GraphTest, StoredNodesFollowCreation) {
  Node* first = graph_.AddNode("Neg", "", {x_}, {"d.out"}, "d", a_);  // scheduled first, made last
  ASSERT_TRUE(graph_.EraseNode(first).ok());
  Node* e = graph_.AddNode("Neg", "", {x_}, {"e.out"}, "e", a_);
  EXPECT_EQ(Schedule(graph_), (std::vector<std::string>{"e", "a", "b", "c"}));
  std::vector<std::string> stored;
  for (const Node* node : graph_.stored_nodes()) stored.emplace_back(node->name());
  EXPECT_EQ(stored, (std::vector<std::string>{"a", "b", "c", "e"}));
  EXPECT_TRUE(first->erased());
  EXPECT_FALSE(e->erased());
  for (size_t parts : {1, 2, 3, 5, 8}) {
    std::vector<std::string> sliced;
    for (size_t part = 0; part < parts; ++part) {
      for (const Node* node : graph_.stored_nodes(part, parts)) sliced.emplace_back(node->name());
    }
    EXPECT_EQ(sliced, stored) << parts << " slices";
  }
}

// ScheduledNodes reads the pool while it holds the schedule in order (nodes only added at the
// end, or erased) and follows the links once a node was inserted or moved: after every edit it
// lists what the links do.
TEST_F(GraphTest, ScheduledNodesFollowTheScheduleThroughEdits) {
  auto scheduled = [](const Graph& graph) {
    std::vector<std::string> names;
    for (const Node* node : graph.ScheduledNodes()) names.emplace_back(node->name());
    return names;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(scheduled(graph_), (Names{"a", "b", "c"}));
  Node* d = graph_.AddNode("Neg", "", {c_->output(0)}, {"d.out"}, "d");
  EXPECT_EQ(scheduled(graph_), (Names{"a", "b", "c", "d"}));
  ASSERT_TRUE(graph_.EraseNode(d).ok());
  EXPECT_EQ(scheduled(graph_), (Names{"a", "b", "c"}));
  Node* e = graph_.AddNode("Neg", "", {x_}, {"e.out"}, "e");
  EXPECT_EQ(scheduled(graph_), (Names{"a", "b", "c", "e"}));
  graph_.MoveAfter(c_, e);  // made before e, now after it
  EXPECT_EQ(scheduled(graph_), (Names{"a", "b", "e", "c"}));
  EXPECT_EQ(scheduled(graph_), Schedule(graph_));

  Graph inserted;
  Value* x = inserted.AddInput("x", Float({4}));
  Node* first = inserted.AddNode("Relu", "", {x}, {"first.out"}, "first");
  inserted.AddNode("Relu", "", {x}, {"second.out"}, "second");
  inserted.AddNode("Relu", "", {x}, {"before_first.out"}, "before_first", first);
  EXPECT_EQ(scheduled(inserted), (Names{"before_first", "first", "second"}));
  EXPECT_EQ(scheduled(inserted), Schedule(inserted));
}

// Typed attributes round-trip and replace attributes of the same name.
TEST_F(GraphTest, Attributes) {
  a_->SetInt("axis", 1);
  a_->SetInts("perm", std::vector<int64_t>{1, 0});
  a_->SetFloat("alpha", 0.5f);
  a_->SetString("mode", "avg");
  a_->SetStrings("names", std::vector<std::string>{"p", "q"});
  a_->SetInt("axis", 2);
  EXPECT_EQ(a_->GetInt("axis"), 2);
  EXPECT_EQ(std::vector<int64_t>(a_->GetInts("perm")->begin(), a_->GetInts("perm")->end()),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(a_->GetFloat("alpha"), 0.5f);
  EXPECT_EQ(a_->GetString("mode"), "avg");
  EXPECT_EQ(a_->GetStrings("names")->size(), 2u);
  EXPECT_FALSE(a_->GetInt("mode").has_value());  // wrong kind
  EXPECT_EQ(a_->GetAttributeType("perm"), AttributeType::kInts);
  EXPECT_TRUE(a_->RemoveAttribute("axis"));
  EXPECT_FALSE(a_->HasAttribute("axis"));
  EXPECT_EQ(a_->AttributeNames().size(), 4u);
}

// The model `graph` writes, with the fields the graph holds for its nodes.
onnx::ModelProto WrittenModel(Graph& graph) {
  onnx::ModelProto written;
  const Status status = graph.WithModelProto(
      nullptr, [&](const onnx::ModelProto& model, const Graph::HeldFields& fields) {
        written = model;
        for (int i = 0; i < written.graph().node_size(); ++i) {
          fields.AddTo(static_cast<size_t>(i), *written.mutable_graph()->mutable_node(i));
        }
        return Status::Ok();
      });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return written;
}

// The `__op_role` attributes of the model `graph` writes, node by node ("-" where none).
std::vector<std::string> WrittenRoles(Graph& graph) {
  std::vector<std::string> roles;
  const onnx::ModelProto model = WrittenModel(graph);
  for (const onnx::NodeProto& node : model.graph().node()) {
    std::string role = "-";
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == kOpRoleAttr) role = std::to_string(attr.i());
    }
    roles.push_back(role);
  }
  return roles;
}

// Annotations are cached and mirrored as `__` attributes; a role set on a node without one is
// written with the model only.
TEST_F(GraphTest, Annotations) {
  EXPECT_FALSE(b_->has_role());
  EXPECT_EQ(b_->stream(), kComputeStream);
  b_->SetRole(OpRole::kBackward, /*is_loss=*/true);
  b_->SetStream(kCommStream);
  b_->SetBucket(3);
  EXPECT_EQ(b_->role(), OpRole::kBackward);
  EXPECT_TRUE(b_->is_loss());
  EXPECT_FALSE(b_->HasAttribute(kOpRoleAttr));
  EXPECT_EQ(b_->stream(), kCommStream);
  EXPECT_EQ(b_->GetString(kExecutionStreamAttr), kCommStream);
  EXPECT_EQ(b_->bucket(), 3);
  EXPECT_EQ(WrittenRoles(graph_), (std::vector<std::string>{"-", "257", "-"}));

  // A node that carries `__op_role` has it rewritten in place.
  a_->SetInt(kOpRoleAttr, 0);
  a_->SetRole(OpRole::kOptimize);
  EXPECT_EQ(a_->GetInt(kOpRoleAttr), static_cast<int64_t>(OpRole::kOptimize));
  EXPECT_EQ(WrittenRoles(graph_),
            (std::vector<std::string>{std::to_string(static_cast<int64_t>(OpRole::kOptimize)),
                                      "257", "-"}));

  // Removing an unwritten role removes it from the file too.
  EXPECT_TRUE(b_->RemoveAttribute(kOpRoleAttr));
  EXPECT_FALSE(b_->has_role());
  EXPECT_EQ(WrittenRoles(graph_),
            (std::vector<std::string>{std::to_string(static_cast<int64_t>(OpRole::kOptimize)), "-",
                                      "-"}));
}

// Value types come from inputs, value_info and initializers.
TEST_F(GraphTest, ValueTypes) {
  EXPECT_EQ(x_->type(), Float({4}));
  EXPECT_FALSE(a_->output(0)->type().has_value());
  graph_.SetValueType(a_->output(0), TensorType{DataType::kFloat16, std::vector<int64_t>{-1, 4}});
  EXPECT_EQ(a_->output(0)->type()->ToString(), "float16[?,4]");
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  Value* w = graph_.AddInitializer("w", DataType::kFloat32, std::vector<int64_t>{2, 3},
                                   std::as_bytes(std::span<const float>(data)));
  EXPECT_EQ(w->type(), Float({2, 3}));
  ASSERT_TRUE(w->initializer()->Bytes().ok());
  EXPECT_EQ(w->initializer()->Bytes()->size(), 24u);
  EXPECT_EQ(graph_.initializers().size(), 1u);
}

// A named symbolic dim is written to the input's and the output's entries, reads back as unknown,
// and leaves the other dims as they were.
TEST_F(GraphTest, SetDimParamNamesTheDimEverywhereTheTypeIsWritten) {
  Value* ids = graph_.AddInput("ids", TensorType{DataType::kInt64, std::vector<int64_t>{-1, 8}});
  graph_.SetDimParam(ids, 0, "batch");
  Value* out = c_->output(0);
  graph_.SetValueType(out, Float({-1, 4}));
  graph_.SetDimParam(out, 0, "batch");
  EXPECT_EQ(ids->type()->ToString(), "int64[?,8]");
  EXPECT_EQ(out->type()->ToString(), "float[?,4]");
  ASSERT_TRUE(graph_
                  .WithModelProto(nullptr,
                                  [&](const onnx::ModelProto& model, const Graph::HeldFields&) {
                                    const onnx::GraphProto& g = model.graph();
                                    const auto& in = g.input(1).type().tensor_type().shape();
                                    EXPECT_EQ(in.dim(0).dim_param(), "batch");
                                    EXPECT_EQ(in.dim(1).dim_value(), 8);
                                    const auto& o = g.output(0).type().tensor_type().shape();
                                    EXPECT_EQ(o.dim(0).dim_param(), "batch");
                                    EXPECT_EQ(o.dim(1).dim_value(), 4);
                                    return Status::Ok();
                                  })
                  .ok());
}

// Metadata and opset imports are model-level key/value data.
TEST_F(GraphTest, ModelData) {
  graph_.SetMetadata("zerograph.loss", "loss");
  graph_.SetMetadata("zerograph.loss", "loss2");
  EXPECT_EQ(graph_.GetMetadata("zerograph.loss"), "loss2");
  EXPECT_EQ(graph_.metadata().size(), 1u);
  graph_.SetOpsetVersion("", 17);
  EXPECT_EQ(graph_.OpsetVersion("ai.onnx"), 17);
  EXPECT_FALSE(graph_.OpsetVersion("org.zerograph").has_value());
  EXPECT_EQ(graph_.ir_version(), 8);
}

// The exported model lists nodes in schedule order with rewired inputs, and the IR survives it.
TEST_F(GraphTest, ExportFollowsSchedule) {
  graph_.MoveBefore(c_, a_);
  graph_.SetInput(c_, 0, x_);
  std::vector<std::string> exported;
  const onnx::ModelProto model = WrittenModel(graph_);
  for (const auto& node : model.graph().node()) {
    exported.push_back(node.name() + ":" + node.input(0));
  }
  EXPECT_EQ(model.graph().output(0).name(), "c.out");
  EXPECT_EQ(exported, (std::vector<std::string>{"c:x", "a:x", "b:a.out"}));
  EXPECT_EQ(graph_.num_nodes(), 3u);
  EXPECT_EQ(WrittenModel(graph_).graph().node_size(), 3);
}

// Adopting values as a node's outputs keeps their readers and graph outputs, drops the
// initializer's data and the old producer's output, and writes one value_info entry per value.
TEST_F(GraphTest, AdoptAsOutputKeepsReaders) {
  const std::vector<float> zeros(4, 0.0f);
  Value* w = graph_.AddInitializer("w", DataType::kFloat32, std::vector<int64_t>{4},
                                   std::as_bytes(std::span(zeros)));
  Node* reader = graph_.AddNode("Add", "", {b_->output(0), w}, {"sum"}, "reader", c_);
  graph_.SetValueType(c_->output(0), Float({4}));
  Value* fused = graph_.AddInput("fused", Float({8}));
  Node* views = graph_.AddNode("Split", "", {fused}, {}, "views", a_);
  Value* c_out = c_->output(0);
  graph_.AdoptAsOutput(views, w, Float({4}));
  graph_.AdoptAsOutput(views, c_out, Float({2, 2}));

  EXPECT_EQ(w->producer(), views);
  EXPECT_EQ(w->initializer(), nullptr);
  EXPECT_TRUE(graph_.initializers().empty());
  ASSERT_EQ(w->users().size(), 1u);
  EXPECT_EQ(w->users()[0].node, reader);
  EXPECT_EQ(c_out->producer(), views);
  EXPECT_EQ(c_out->producer_output_index(), 1);
  EXPECT_EQ(c_->output(0), nullptr);
  EXPECT_EQ(graph_.FindValue("c.out"), c_out);
  EXPECT_EQ(graph_.outputs()[0], c_out);
  EXPECT_EQ(c_out->type()->dims, (std::vector<int64_t>{2, 2}));
  {
    const onnx::ModelProto model = WrittenModel(graph_);
    const onnx::GraphProto& g = model.graph();
    EXPECT_EQ(g.initializer_size(), 0);
    EXPECT_EQ(g.node(0).output(0), "w");
    EXPECT_EQ(g.node(0).output(1), "c.out");
    // c keeps its output slot, now an omitted output.
    ASSERT_EQ(g.node(4).output_size(), 1);
    EXPECT_EQ(g.node(4).name(), "c");
    EXPECT_EQ(g.node(4).output(0), "");
    // c's value_info entry from before was replaced.
    EXPECT_EQ(g.value_info_size(), 2);
    EXPECT_EQ(g.value_info(0).name(), "w");
    EXPECT_EQ(g.value_info(1).name(), "c.out");
    EXPECT_EQ(g.output(0).type().tensor_type().shape().dim_size(), 2);
  }
  ASSERT_TRUE(graph_.EraseNode(c_).ok());
  EXPECT_TRUE(Verify(graph_).ok()) << Verify(graph_).message();
}

// Adopted without a type, a value keeps the one its value_info entry records, and that entry
// still moves after the entries made before it.
TEST_F(GraphTest, AdoptAsOutputKeepsRecordedType) {
  graph_.SetValueType(c_->output(0), Float({2, 2}));
  graph_.SetValueType(a_->output(0), Float({4}));
  Value* fused = graph_.AddInput("fused", Float({8}));
  Node* views = graph_.AddNode("Split", "", {fused}, {}, "views", a_);
  Value* c_out = c_->output(0);
  graph_.AdoptAsOutput(views, c_out);
  EXPECT_EQ(c_out->producer(), views);
  EXPECT_EQ(c_out->type()->dims, (std::vector<int64_t>{2, 2}));
  const onnx::ModelProto model = WrittenModel(graph_);
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(g.node(0).output(0), "c.out");
  EXPECT_EQ(g.value_info_size(), 2);
  EXPECT_EQ(g.value_info(0).name(), "a.out");
  EXPECT_EQ(g.value_info(1).name(), "c.out");
  EXPECT_EQ(g.value_info(1).type().tensor_type().shape().dim_size(), 2);
  EXPECT_EQ(g.output(0).type().tensor_type().shape().dim_size(), 2);
}

// Type records made ahead on another thread serve AdoptAsOutput as the messages SetValueType
// makes: the written model is the one adopting without them writes, graph outputs retyped too. A
// value that has an entry already (c.out) keeps it, retyped, and leaves its record unused.
TEST_F(GraphTest, AdoptAsOutputTakesTypeRecordsMadeAhead) {
  auto written = [](bool ahead) {
    Graph graph;
    Value* x = graph.AddInput("x", Float({4}));
    const std::vector<float> zeros(4, 0.0f);
    Value* w = graph.AddInitializer("w", DataType::kFloat32, std::vector<int64_t>{4},
                                    std::as_bytes(std::span(zeros)));
    Node* c = graph.AddNode("Add", "", {x, w}, {"c.out"}, "c");
    graph.SetValueType(c->output(0), Float({4}));
    graph.AddOutput(c->output(0));
    graph.AddOutput(w);
    Node* views = graph.AddNode("Split", "", {graph.AddInput("fused", Float({8}))}, {}, "views", c);
    Value* c_out = c->output(0);
    if (ahead) {
      onnx::ValueInfoProto* records[2];
      std::thread maker([&] {
        records[0] = graph.MakeTypeRecord("w", Float({2, 2}));
        records[1] = graph.MakeTypeRecord("c.out", Float({2, 2}));
      });
      maker.join();
      graph.AdoptAsOutput(views, w, Float({2, 2}), records[0]);
      graph.AdoptAsOutput(views, c_out, Float({2, 2}), records[1]);
    } else {
      graph.AdoptAsOutput(views, w, Float({2, 2}));
      graph.AdoptAsOutput(views, c_out, Float({2, 2}));
    }
    EXPECT_TRUE(graph.EraseNode(c).ok());
    EXPECT_TRUE(Verify(graph).ok()) << Verify(graph).message();
    return WrittenModel(graph).SerializeAsString();
  };
  const std::string with_records = written(true);
  EXPECT_EQ(with_records, written(false));
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(with_records));
  ASSERT_EQ(model.graph().value_info_size(), 2);
  EXPECT_EQ(model.graph().value_info(0).name(), "w");
  EXPECT_EQ(model.graph().value_info(0).type().tensor_type().shape().dim_size(), 2);
  for (const onnx::ValueInfoProto& output : model.graph().output()) {
    EXPECT_EQ(output.type().tensor_type().shape().dim_size(), 2) << output.name();
  }
}

// --- Import from ONNX messages ------------------------------------------------------------------

std::unique_ptr<ProtoStore> StoreWith(const std::function<void(onnx::GraphProto&)>& fill) {
  auto store = std::make_unique<ProtoStore>();
  store->model->set_ir_version(8);
  fill(*store->model->mutable_graph());
  return store;
}

void AddNodeProto(onnx::GraphProto& graph, const std::string& name, const std::string& op,
                  std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto* node = graph.add_node();
  node->set_name(name);
  node->set_op_type(op);
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
}

void AddInputProto(onnx::GraphProto& graph, const std::string& name) {
  onnx::ValueInfoProto* input = graph.add_input();
  input->set_name(name);
  input->mutable_type()->mutable_tensor_type()->set_elem_type(1);
}

StatusOr<std::unique_ptr<Graph>> Import(const std::function<void(onnx::GraphProto&)>& fill) {
  return Graph::FromModelProto(StoreWith(fill), nullptr);
}

// A well-formed graph imports with its annotations read.
TEST(GraphImportTest, ImportsEdgesAndAnnotations) {
  auto graph = Import([](onnx::GraphProto& g) {
    AddInputProto(g, "x");
    AddNodeProto(g, "n1", "Relu", {"x"}, {"y"});
    onnx::AttributeProto* role = g.mutable_node(0)->add_attribute();
    role->set_name("__op_role");
    role->set_type(onnx::AttributeProto::INT);
    role->set_i(257);
    AddNodeProto(g, "n2", "Neg", {"y"}, {"z"});
    g.add_output()->set_name("z");
  });
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Node* n1 = (*graph)->FindNode("n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->role(), OpRole::kBackward);
  EXPECT_TRUE(n1->is_loss());
  EXPECT_EQ((*graph)->FindValue("y")->users()[0].node->name(), "n2");
  EXPECT_TRUE(Verify(**graph).ok());
}

// Reading a value that nothing defines names the node and the value.
TEST(GraphImportTest, RejectsUndefinedValue) {
  auto graph = Import([](onnx::GraphProto& g) { AddNodeProto(g, "n1", "Relu", {"ghost"}, {"y"}); });
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(graph.status().message().find("node 'n1' (Relu)"), std::string_view::npos);
  EXPECT_NE(graph.status().message().find("'ghost'"), std::string_view::npos);
}

// A use before the definition (wrong order or a cycle) names both nodes.
TEST(GraphImportTest, RejectsWrongOrder) {
  auto graph = Import([](onnx::GraphProto& g) {
    AddNodeProto(g, "first", "Relu", {"late"}, {"y"});
    AddNodeProto(g, "second", "Neg", {"y"}, {"late"});
  });
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("node 'first'"), std::string_view::npos);
  EXPECT_NE(graph.status().message().find("node 'second'"), std::string_view::npos);
  EXPECT_NE(graph.status().message().find("topological"), std::string_view::npos);
}

// Two definitions of one name break SSA.
TEST(GraphImportTest, RejectsDuplicateOutput) {
  auto graph = Import([](onnx::GraphProto& g) {
    AddInputProto(g, "x");
    AddNodeProto(g, "a", "Relu", {"x"}, {"y"});
    AddNodeProto(g, "b", "Neg", {"x"}, {"y"});
  });
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(
      graph.status().message().find("node 'b' (Neg): output 'y' is already defined by node 'a'"),
      std::string_view::npos)
      << graph.status().message();
}

// Node names must be unique (ONNX's checker does not enforce it; we do).
TEST(GraphImportTest, RejectsDuplicateNodeName) {
  auto graph = Import([](onnx::GraphProto& g) {
    AddInputProto(g, "x");
    AddNodeProto(g, "a", "Relu", {"x"}, {"y"});
    AddNodeProto(g, "a", "Neg", {"x"}, {"z"});
  });
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("node 'a' (Neg)"), std::string_view::npos);
}

// An attribute without a known type is refused, naming node and attribute.
TEST(GraphImportTest, RejectsUnknownAttributeType) {
  auto graph = Import([](onnx::GraphProto& g) {
    AddInputProto(g, "x");
    AddNodeProto(g, "a", "Relu", {"x"}, {"y"});
    g.mutable_node(0)->add_attribute()->set_name("mystery");
  });
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("attribute 'mystery'"), std::string_view::npos);
}

// The node-level rules of ONNX's checker that we enforce (docs/cli.md): each is refused with the
// node named.
TEST(GraphImportTest, RejectsWhatOnnxCheckerRejectsInANode) {
  struct Case {
    const char* why;
    std::function<void(onnx::NodeProto&)> spoil;
    const char* message;
  };
  const Case cases[] = {
      {"empty op_type", [](onnx::NodeProto& n) { n.clear_op_type(); }, "has no op_type"},
      {"no inputs or outputs",
       [](onnx::NodeProto& n) {
         n.clear_input();
         n.clear_output();
       },
       "has neither inputs nor outputs"},
      {"unnamed attribute",
       [](onnx::NodeProto& n) { n.add_attribute()->set_type(onnx::AttributeProto::INT); },
       "attribute #0 has no name"},
      {"attribute twice",
       [](onnx::NodeProto& n) {
         for (int k = 0; k < 2; ++k) {
           onnx::AttributeProto* a = n.add_attribute();
           a->set_name("alpha");
           a->set_type(onnx::AttributeProto::FLOAT);
           a->set_f(1.0f);
         }
       },
       "attribute 'alpha' appears twice"},
      {"two value fields",
       [](onnx::NodeProto& n) {
         onnx::AttributeProto* a = n.add_attribute();
         a->set_name("alpha");
         a->set_type(onnx::AttributeProto::FLOAT);
         a->set_f(1.0f);
         a->set_i(1);
       },
       "attribute 'alpha' sets 2 value fields"},
      {"value of another type",
       [](onnx::NodeProto& n) {
         onnx::AttributeProto* a = n.add_attribute();
         a->set_name("alpha");
         a->set_type(onnx::AttributeProto::FLOAT);
         a->set_i(1);
       },
       "attribute 'alpha' is declared FLOAT but holds a value of another type"},
      {"reference outside a function",
       [](onnx::NodeProto& n) {
         onnx::AttributeProto* a = n.add_attribute();
         a->set_name("alpha");
         a->set_type(onnx::AttributeProto::FLOAT);
         a->set_ref_attr_name("outer");
       },
       "refers to a function's attribute 'outer'"},
  };
  for (const Case& c : cases) {
    auto graph = Import([&](onnx::GraphProto& g) {
      AddInputProto(g, "x");
      AddNodeProto(g, "a", "Relu", {"x"}, {"y"});
      c.spoil(*g.mutable_node(0));
    });
    ASSERT_FALSE(graph.ok()) << c.why;
    EXPECT_EQ(graph.status().code(), StatusCode::kInvalidArgument) << c.why;
    EXPECT_NE(graph.status().message().find("node 'a'"), std::string_view::npos)
        << c.why << ": " << graph.status().message();
    EXPECT_NE(graph.status().message().find(c.message), std::string_view::npos)
        << c.why << ": " << graph.status().message();
  }
}

// A list attribute without elements sets no value field, which ONNX's checker accepts.
TEST(GraphImportTest, AcceptsEmptyListAttribute) {
  auto graph = Import([](onnx::GraphProto& g) {
    AddInputProto(g, "x");
    AddNodeProto(g, "a", "Relu", {"x"}, {"y"});
    onnx::AttributeProto* a = g.mutable_node(0)->add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
  });
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
}

// A graph output must be defined.
TEST(GraphImportTest, RejectsUndefinedOutput) {
  auto graph = Import([](onnx::GraphProto& g) { g.add_output()->set_name("nowhere"); });
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("'nowhere'"), std::string_view::npos);
}

// Raw data must match the initializer's shape.
TEST(GraphImportTest, RejectsShortRawData) {
  auto graph = Import([](onnx::GraphProto& g) {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name("w");
    t->set_data_type(1);
    t->add_dims(4);
    t->set_raw_data(std::string(12, '\0'));
  });
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("initializer 'w' holds 12 bytes"),
            std::string_view::npos);
}

// Typed initializer data is converted to raw bytes on demand.
TEST(GraphImportTest, TypedDataBecomesBytes) {
  auto graph = Import([](onnx::GraphProto& g) {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name("h");
    t->set_data_type(static_cast<int>(DataType::kFloat16));
    t->add_dims(2);
    t->add_int32_data(0x3c00);  // 1.0 in fp16
    t->add_int32_data(0xc000);  // -2.0
  });
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto bytes = (*graph)->FindValue("h")->initializer()->Bytes();
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 4u);
  EXPECT_EQ(std::to_integer<int>((*bytes)[1]), 0x3c);
  EXPECT_EQ(std::to_integer<int>((*bytes)[3]), 0xc0);
}

// An initializer's bytes can be set after it is made, when they are as many as its type needs;
// they replace typed data.
TEST(GraphInitializerTest, SetInitializerBytes) {
  auto graph = Import([](onnx::GraphProto& g) {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name("w");
    t->set_data_type(static_cast<int>(DataType::kFloat32));
    t->add_dims(2);
    t->add_float_data(1.0f);
    t->add_float_data(2.0f);
  });
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Value* w = (*graph)->FindValue("w");
  ASSERT_TRUE(w->initializer()->Bytes().ok());  // converted once; the conversion must go
  const std::vector<float> values = {3.0f, -4.0f};
  std::string bytes(reinterpret_cast<const char*>(values.data()), 8);
  EXPECT_FALSE((*graph)->SetInitializerBytes(w, std::string(4, '\0')).ok());
  ASSERT_TRUE((*graph)->SetInitializerBytes(w, std::move(bytes)).ok());
  auto read = w->initializer()->Bytes();
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 8u);
  EXPECT_EQ(std::memcmp(read->data(), values.data(), 8), 0);
  EXPECT_EQ(w->initializer()->proto().float_data_size(), 0);
  Value* x = (*graph)->AddInput("x", TensorType{DataType::kFloat32, std::vector<int64_t>{2}});
  EXPECT_FALSE((*graph)->SetInitializerBytes(x, std::string(8, '\0')).ok());
}

// Typed data is converted on first use; threads that read the bytes at once (the graph's sweeps
// run on several) all get the one conversion. (Under ThreadSanitizer a racing conversion fails.)
TEST(GraphInitializerTest, TypedDataConvertsOnceForThreadsReadingAtOnce) {
  constexpr int kElements = 4096;
  auto graph = Import([](onnx::GraphProto& g) {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name("shape");
    t->set_data_type(static_cast<int>(DataType::kInt64));
    t->add_dims(kElements);
    for (int i = 0; i < kElements; ++i) t->add_int64_data(i);
  });
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Tensor& tensor = *(*graph)->FindValue("shape")->initializer();
  constexpr int kThreads = 8;
  std::vector<std::span<const std::byte>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&tensor, &seen, t] {
      StatusOr<std::span<const std::byte>> bytes = tensor.Bytes();
      if (bytes.ok()) seen[static_cast<size_t>(t)] = *bytes;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::span<const std::byte>& bytes : seen) {
    ASSERT_EQ(bytes.size(), kElements * sizeof(int64_t));
    EXPECT_EQ(bytes.data(), seen[0].data());  // one conversion
  }
  int64_t last = 0;
  std::memcpy(&last, seen[0].data() + (kElements - 1) * sizeof(int64_t), sizeof(last));
  EXPECT_EQ(last, kElements - 1);
}

}  // namespace
}  // namespace zerograph
