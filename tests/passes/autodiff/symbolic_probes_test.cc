// The types the gradient rules see when graph inputs have symbolic dims: dims of one name share a
// probe (so `batch` in two inputs broadcasts), dims without a name do not.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/value.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/passes/autodiff.h"

namespace zerograph {
namespace {

void AddInput(onnx::GraphProto& graph, const std::string& name, const std::string& batch_name) {
  onnx::ValueInfoProto* input = graph.add_input();
  input->set_name(name);
  onnx::TypeProto::Tensor* tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto::Dimension* batch = tensor->mutable_shape()->add_dim();
  if (!batch_name.empty()) batch->set_dim_param(batch_name);
  tensor->mutable_shape()->add_dim()->set_dim_value(4);
}

// loss = ReduceSum(x·w + y), x and y [<x_batch>, 4] and [<y_batch>, 4], written to a file and
// loaded as rewrite-graph loads it.
std::unique_ptr<Graph> LoadBroadcastModel(const std::string& x_batch, const std::string& y_batch) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("probes");
  AddInput(graph, "x", x_batch);
  AddInput(graph, "y", y_batch);
  onnx::TensorProto& w = *graph.add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(4);
  w.add_dims(4);
  for (int i = 0; i < 16; ++i) w.add_float_data(0.1f * static_cast<float>(i));
  auto node = [&](const char* op, std::vector<std::string> inputs, const char* output) {
    onnx::NodeProto& n = *graph.add_node();
    n.set_op_type(op);
    n.set_name(output);
    for (const std::string& input : inputs) n.add_input(input);
    n.add_output(output);
    return &n;
  };
  node("MatMul", {"x", "w"}, "xw");
  node("Add", {"xw", "y"}, "sum");
  onnx::AttributeProto& keepdims = *node("ReduceSum", {"sum"}, "loss")->add_attribute();
  keepdims.set_name("keepdims");
  keepdims.set_type(onnx::AttributeProto::INT);
  keepdims.set_i(0);
  onnx::ValueInfoProto& loss = *graph.add_output();
  loss.set_name("loss");
  loss.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  loss.mutable_type()->mutable_tensor_type()->mutable_shape();

  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            ("probes_" + x_batch + "_" + y_batch + ".onnx"))
                               .string();
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  StatusOr<std::unique_ptr<Graph>> loaded = LoadModel(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? std::move(loaded).value() : nullptr;
}

// Both inputs' batch is `batch`: one probe, so x·w + y broadcasts and w gets a [4, 4] gradient.
TEST(SymbolicProbesTest, DimsOfOneNameShareAProbe) {
  std::unique_ptr<Graph> graph = LoadBroadcastModel("batch", "batch");
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->FindValue("x")->dim_params(), (std::vector<std::string_view>{"batch", ""}));
  Value* const wrt[] = {graph->FindValue("w")};
  StatusOr<std::vector<Value*>> grads = AppendBackward(*graph, graph->FindValue("loss"), wrt);
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  ASSERT_NE((*grads)[0], nullptr);
}

// Unnamed batch dims are not known to be equal: each gets its own probe, and shape inference
// refuses the Add, naming it. (Exporters name them; rewrite-graph then takes the first case.)
TEST(SymbolicProbesTest, UnnamedDimsGetTheirOwnProbes) {
  std::unique_ptr<Graph> graph = LoadBroadcastModel("", "");
  ASSERT_NE(graph, nullptr);
  Value* const wrt[] = {graph->FindValue("w")};
  StatusOr<std::vector<Value*>> grads = AppendBackward(*graph, graph->FindValue("loss"), wrt);
  ASSERT_FALSE(grads.ok());
  EXPECT_NE(grads.status().message().find("node 'sum' (Add)"), std::string_view::npos)
      << grads.status().message();
}

}  // namespace
}  // namespace zerograph
