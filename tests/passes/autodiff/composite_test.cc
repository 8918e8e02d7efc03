// Rules of every family composed: a pre-LayerNorm transformer block with its loss, checked against
// finite differences as one function of all its weights.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"

namespace zerograph::autodiff {
namespace {

constexpr int64_t kBatch = 2, kSeq = 3, kHeads = 2, kHeadDim = 2, kModel = 4, kClasses = 4;

// x [B, S, D] -> LayerNorm -> Q, K, V heads -> Softmax(Q·Kᵀ·scale)·V -> merged -> ·Wo + x
// -> LayerNorm -> Relu(·W1 + b1)·W2 + residual -> logits [B, C, S] -> SoftmaxCrossEntropyLoss.
std::unique_ptr<Graph> TransformerBlockWithLoss() {
  auto graph = std::make_unique<Graph>();
  GraphBuilder b(*graph, /*default_opset=*/17);
  uint32_t seed = 1;
  auto param = [&](const std::string& name, std::vector<int64_t> dims, float scale = 0.5f) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return b.Initializer(name, dims, RandomValues(static_cast<size_t>(n), seed++, -scale, scale));
  };
  auto int64s = [&](const std::string& name, std::vector<int64_t> values) {
    const int64_t dims[] = {static_cast<int64_t>(values.size())};
    return graph->AddInitializer(name, DataType::kInt64, dims, std::as_bytes(std::span(values)));
  };
  Value* x = param("x", {kBatch, kSeq, kModel}, 1.0f);
  Value* heads_shape = int64s("heads_shape", {0, kSeq, kHeads, kHeadDim});
  auto heads = [&](Value* v, std::vector<int64_t> perm, const std::string& name) {
    return b.Op("Transpose", {b.Op("Reshape", {v, heads_shape}, name + "_heads")}, name + "_t",
                {Attr("perm", std::move(perm))});
  };
  Value* h = b.Op("LayerNormalization", {x, param("ln1.g", {kModel}), param("ln1.b", {kModel})},
                  "ln1", {Attr("axis", -1)});
  Value* q = heads(b.Op("MatMul", {h, param("wq", {kModel, kModel})}, "q"), {0, 2, 1, 3}, "q");
  Value* k = heads(b.Op("MatMul", {h, param("wk", {kModel, kModel})}, "k"), {0, 2, 3, 1}, "k");
  Value* v = heads(b.Op("MatMul", {h, param("wv", {kModel, kModel})}, "v"), {0, 2, 1, 3}, "v");
  const float scale_value[] = {0.7f};
  Value* scores =
      b.Op("Mul", {b.Op("MatMul", {q, k}, "qk"), b.Initializer("scale", {}, scale_value)}, "s");
  Value* attention = b.Op("Softmax", {scores}, "attention", {Attr("axis", -1)});
  Value* mixed = b.Op("Transpose", {b.Op("MatMul", {attention, v}, "mixed")}, "mixed_t",
                      {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  Value* merged = b.Op("Reshape", {mixed, int64s("model_shape", {0, kSeq, kModel})}, "merged");
  Value* x1 = b.Op("Add", {x, b.Op("MatMul", {merged, param("wo", {kModel, kModel})}, "o")}, "x1");
  Value* h2 = b.Op("LayerNormalization", {x1, param("ln2.g", {kModel}), param("ln2.b", {kModel})},
                   "ln2", {Attr("axis", -1)});
  Value* up =
      b.Op("Add", {b.Op("MatMul", {h2, param("w1", {kModel, 8})}, "up"), param("b1", {8})}, "up_b");
  Value* x2 = b.Op(
      "Add", {x1, b.Op("MatMul", {b.Op("Relu", {up}, "act"), param("w2", {8, kModel})}, "down")},
      "x2");
  Value* logits = b.Op("Transpose", {b.Op("MatMul", {x2, param("head", {kModel, kClasses})}, "y")},
                       "logits", {Attr("perm", std::vector<int64_t>{0, 2, 1})});
  Value* labels = int64s("labels", {0, 3, 1, 2, 2, 0});
  Value* labels_2d = b.Op("Reshape", {labels, int64s("label_shape", {kBatch, kSeq})}, "labels_2d");
  const std::string names[] = {"loss"};
  Value* const inputs[] = {logits, labels_2d};
  b.Output(
      b.AddNode("SoftmaxCrossEntropyLoss", inputs, names, {Attr("reduction", "mean")})->output(0));
  return graph;
}

// Every weight of the block, and its input, against central differences.
TEST(CompositeTest, TransformerBlockWithCrossEntropy) {
  ExpectGradientsMatchFiniteDifferences(TransformerBlockWithLoss());
}

}  // namespace
}  // namespace zerograph::autodiff
