// autodiff-bench: the autodiff pass (what `rewrite-graph --train` adds: loss, backward, optimizer)
// on a large forward graph, beside a load and a save of that graph, so that DESIGN §3's rule, a
// rewrite costs about what parsing and writing the graph costs, can be read off one table.
//
// The forward graph is a deep stack of pre-LayerNorm transformer blocks, the op mix of the models
// users export (docs/training.md's gpt_tiny; ONNX Runtime's training examples), with a symbolic
// batch dim as exporters write it. Per block, 23 nodes:
//
//   h = LayerNorm(x); q, k, v = h·Wq, h·Wk, h·Wv, each Reshape [0, S, H, D] + Transpose
//   x = x + Reshape(Transpose(Softmax(q·kᵀ · scale) · v)) · Wo
//   x = x + Relu(LayerNorm(x)·W1 + b1)·W2
//
// so the sweep meets every rule family (matmuls with batch dims, shape ops, softmax, layer norm,
// broadcasting adds) and symbolic dims in every shape. Dims are tiny: the cost measured is the
// graph's size, not its arithmetic. Each size is written once; then, alternating, `--reps` times:
//   io        LoadModel + SaveModel (a temporary file, renamed into place, as rewrite-graph saves)
//   autodiff  AutodiffPass on a graph loaded untimed (--loss mse, AdamW), then Verify, timed apart
// Medians are printed as a markdown table.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"
#include "zerograph/passes/autodiff_pass.h"

namespace zerograph {
namespace {

constexpr int64_t kSeq = 4, kHeads = 2, kHeadDim = 4, kModel = kHeads * kHeadDim, kHidden = 16;
constexpr int64_t kNodesPerBlock = 23;

std::vector<float> Filled(int64_t n, float value) {
  return std::vector<float>(static_cast<size_t>(n), value);
}

// The forward graph of about `target_nodes` nodes.
std::unique_ptr<Graph> BuildTransformerStack(int64_t target_nodes) {
  auto graph = std::make_unique<Graph>();
  graph->SetName("transformer_stack");
  GraphBuilder b(*graph, /*default_opset=*/17);
  const int64_t blocks = std::max<int64_t>(1, target_nodes / kNodesPerBlock);
  Value* x = b.Input("x", DataType::kFloat32, {TensorType::kUnknownDim, kSeq, kModel});
  auto int64s = [&](const std::string& name, std::vector<int64_t> values) {
    const int64_t dims[] = {static_cast<int64_t>(values.size())};
    return graph->AddInitializer(name, DataType::kInt64, dims, std::as_bytes(std::span(values)));
  };
  // Reshape's 0 keeps the input's (symbolic) batch dim.
  Value* heads_shape = int64s("heads_shape", {0, kSeq, kHeads, kHeadDim});
  Value* model_shape = int64s("model_shape", {0, kSeq, kModel});
  const float scale_value[] = {1.0f / 2.0f};
  Value* scale = b.Initializer("scale", std::vector<int64_t>{}, scale_value);
  auto weight = [&](const std::string& name, std::initializer_list<int64_t> dims, float v) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return b.Initializer(name, dims, Filled(n, v));
  };
  auto heads = [&](Value* v, std::vector<int64_t> perm, const std::string& name) {
    return b.Op("Transpose", {b.Op("Reshape", {v, heads_shape}, name + "_heads")}, name + "_t",
                {Attr("perm", std::move(perm))});
  };
  for (int64_t i = 0; i < blocks; ++i) {
    const std::string p = StrCat("blocks.", i, ".");
    Value* h =
        b.Op("LayerNormalization",
             {x, weight(p + "ln1.weight", {kModel}, 1.0f), weight(p + "ln1.bias", {kModel}, 0)},
             p + "ln1", {Attr("axis", -1)});
    Value* q = heads(b.Op("MatMul", {h, weight(p + "wq", {kModel, kModel}, 0.02f)}, p + "q"),
                     {0, 2, 1, 3}, p + "q");
    Value* k = heads(b.Op("MatMul", {h, weight(p + "wk", {kModel, kModel}, 0.02f)}, p + "k"),
                     {0, 2, 3, 1}, p + "k");
    Value* v = heads(b.Op("MatMul", {h, weight(p + "wv", {kModel, kModel}, 0.02f)}, p + "v"),
                     {0, 2, 1, 3}, p + "v");
    Value* scores = b.Op("Mul", {b.Op("MatMul", {q, k}, p + "qk"), scale}, p + "scores");
    Value* attention = b.Op("Softmax", {scores}, p + "attention", {Attr("axis", -1)});
    Value* mixed = b.Op("Transpose", {b.Op("MatMul", {attention, v}, p + "mixed")}, p + "mixed_t",
                        {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    Value* merged = b.Op("Reshape", {mixed, model_shape}, p + "merged");
    x = b.Op(
        "Add",
        {x, b.Op("MatMul", {merged, weight(p + "wo", {kModel, kModel}, 0.02f)}, p + "attn_out")},
        p + "residual1");
    Value* h2 =
        b.Op("LayerNormalization",
             {x, weight(p + "ln2.weight", {kModel}, 1.0f), weight(p + "ln2.bias", {kModel}, 0)},
             p + "ln2", {Attr("axis", -1)});
    Value* up = b.Op("Add",
                     {b.Op("MatMul", {h2, weight(p + "w1", {kModel, kHidden}, 0.02f)}, p + "up"),
                      weight(p + "b1", {kHidden}, 0)},
                     p + "up_bias");
    Value* down =
        b.Op("MatMul", {b.Op("Relu", {up}, p + "act"), weight(p + "w2", {kHidden, kModel}, 0.02f)},
             p + "down");
    x = b.Op("Add", {x, down}, p + "residual2");
  }
  b.SetType(x, DataType::kFloat32, {TensorType::kUnknownDim, kSeq, kModel});
  b.Output(x);
  return graph;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Row {
  int64_t nodes = 0;
  int64_t backward_nodes = 0;
  double io = 0, autodiff = 0, verify = 0;
};

Status Measure(int64_t target_nodes, int reps, const std::string& dir, Row& row) {
  const std::string path = StrCat(dir, "/forward_", target_nodes, ".onnx");
  const std::string out = StrCat(dir, "/copy_", target_nodes, ".onnx");
  {
    std::unique_ptr<Graph> graph = BuildTransformerStack(target_nodes);
    row.nodes = static_cast<int64_t>(graph->num_nodes());
    ZG_RETURN_IF_ERROR(SaveModel(*graph, path));
  }
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kMeanSquaredError;
  options.label = "target";
  std::vector<double> io, autodiff, verify;
  for (int rep = 0; rep < reps; ++rep) {
    auto start = std::chrono::steady_clock::now();
    {
      ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(path));
      ZG_RETURN_IF_ERROR(SaveModel(*graph, out));
    }
    io.push_back(Seconds(start));

    ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(path));
    const auto before = static_cast<int64_t>(graph->num_nodes());
    AutodiffPass pass(options);
    start = std::chrono::steady_clock::now();
    ZG_ASSIGN_OR_RETURN(bool changed, pass.Run(*graph));
    autodiff.push_back(Seconds(start));
    ZG_RET_CHECK(changed);
    start = std::chrono::steady_clock::now();
    ZG_RETURN_IF_ERROR(Verify(*graph));
    verify.push_back(Seconds(start));
    row.backward_nodes = static_cast<int64_t>(graph->num_nodes()) - before;
  }
  row.io = Median(io);
  row.autodiff = Median(autodiff);
  row.verify = Median(verify);
  std::filesystem::remove(path);
  std::filesystem::remove(out);
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app("Times the autodiff pass beside a load and a save of the same forward graph.",
               "autodiff-bench");
  std::vector<int64_t> sizes = {10000, 100000};
  int reps = 5;
  std::string dir = std::filesystem::temp_directory_path().string();
  app.add_option("--nodes", sizes, "Forward graph sizes (nodes, about)")->capture_default_str();
  app.add_option("--reps", reps, "Repetitions; medians are printed")->capture_default_str();
  app.add_option("--dir", dir, "Where the graphs are written")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::cout << "| forward nodes | backward + optimizer nodes added | load + save | autodiff pass "
               "| autodiff / (load + save) | Verify after |\n"
               "|---:|---:|---:|---:|---:|---:|\n";
  for (int64_t size : sizes) {
    zerograph::Row row;
    zerograph::Status measured = zerograph::Measure(size, reps, dir, row);
    if (!measured.ok()) {
      std::cerr << "error: " << measured.message() << "\n";
      return 3;
    }
    std::printf("| %lld | %lld | %.3f s | %.3f s | %.2fx | %.3f s |\n",
                static_cast<long long>(row.nodes), static_cast<long long>(row.backward_nodes),
                row.io, row.autodiff, row.autodiff / row.io, row.verify);
    std::fflush(stdout);
  }
  return 0;
}
