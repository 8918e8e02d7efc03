#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/node.h"
#include "zerograph/passes/autodiff.h"

namespace zerograph::autodiff {
namespace {

constexpr std::string_view kMicrosoft = "com.microsoft";

class NormalizationRulesTest : public ::testing::Test {
 protected:
  NormalizationRulesTest() { UseOpset(17); }

  // Starts a new graph importing `opset` of ONNX's default domain.
  void UseOpset(int64_t opset) {
    graph_ = std::make_unique<Graph>();
    b_.emplace(*graph_, opset);
  }
  // A float initializer of random values (a new seed each).
  Value* Param(std::string_view name, std::vector<int64_t> dims) {
    return b_->Initializer(name, dims,
                           RandomValues(static_cast<size_t>(NumElements(dims)), seed_++));
  }
  void Check(Value* output) {
    b_->Output(output);
    ExpectGradientsMatchFiniteDifferences(std::move(graph_));
  }
  // Appends the backward of Σ output with respect to `wrt`.
  void Differentiate(Value* output, std::vector<Value*> wrt) {
    Value* loss = b_->Op("ReduceSum", {output}, "loss", {Attr("keepdims", 0)});
    StatusOr<std::vector<Value*>> grads = AppendBackward(*graph_, loss, wrt);
    ASSERT_TRUE(grads.ok()) << grads.status().message();
  }
  int Count(std::string_view op_type) const {
    int count = 0;
    for (const Node* node : graph_->nodes()) count += node->op_type() == op_type ? 1 : 0;
    return count;
  }

  std::unique_ptr<Graph> graph_;
  std::optional<GraphBuilder> b_;
  uint32_t seed_ = 20;
};

// Softmax-13 along its default axis, the last.
TEST_F(NormalizationRulesTest, SoftmaxDefaultAxis) {
  Check(b_->Op("Softmax", {Param("x", {3, 5})}, "y"));
}

// Softmax-13 along a middle axis given as negative: rows are strided.
TEST_F(NormalizationRulesTest, SoftmaxNegativeMiddleAxis) {
  Check(b_->Op("Softmax", {Param("x", {2, 3, 4})}, "y", {Attr("axis", -2)}));
}

// Softmax-11's default axis 1 on a 3-D input: a row is [3, 4] flattened (2-D coercion).
TEST_F(NormalizationRulesTest, SoftmaxOpset11CoercesTo2D) {
  UseOpset(11);
  Check(b_->Op("Softmax", {Param("x", {2, 3, 4})}, "y"));
}

// Softmax-11 along the last axis: coercion and per-axis agree, no reshape.
TEST_F(NormalizationRulesTest, SoftmaxOpset11LastAxis) {
  UseOpset(11);
  Check(b_->Op("Softmax", {Param("x", {2, 3, 4})}, "y", {Attr("axis", -1)}));
}

// LogSoftmax-13 along axis 1 of three.
TEST_F(NormalizationRulesTest, LogSoftmaxMiddleAxis) {
  Check(b_->Op("LogSoftmax", {Param("x", {2, 3, 4})}, "y", {Attr("axis", 1)}));
}

// LogSoftmax-11 at axis 1 of a 4-D input: rows of 3·2·2 elements.
TEST_F(NormalizationRulesTest, LogSoftmaxOpset11CoercesTo2D) {
  UseOpset(11);
  Check(b_->Op("LogSoftmax", {Param("x", {2, 3, 2, 2})}, "y", {Attr("axis", 1)}));
}

// LayerNormalization over the last axis with a bias and no statistics outputs: the backward
// recomputes Mean and InvStdDev.
TEST_F(NormalizationRulesTest, LayerNormalizationRecomputesStatistics) {
  Check(b_->Op("LayerNormalization", {Param("x", {2, 3, 4}), Param("scale", {4}), Param("b", {4})},
               "y"));
}

// LayerNormalization over the last two axes with its statistics outputs, which the backward
// reads, and a non-default epsilon.
TEST_F(NormalizationRulesTest, LayerNormalizationUsesSavedStatistics) {
  Value* const inputs[] = {Param("x", {2, 3, 4}), Param("scale", {3, 4}), Param("b", {3, 4})};
  const std::string outputs[] = {"y", "mean", "inv_std_dev"};
  Node* node =
      b_->AddNode("LayerNormalization", inputs, outputs, {Attr("axis", 1), Attr("epsilon", 1e-3)});
  Check(node->output(0));
}

// With Mean and InvStdDev among the forward's outputs, the backward reads them: no second
// LayerNormalization.
TEST_F(NormalizationRulesTest, LayerNormalizationSavedStatisticsAreNotRecomputed) {
  Value* x = Param("x", {2, 4});
  Value* const inputs[] = {x, Param("scale", {4})};
  const std::string outputs[] = {"y", "mean", "inv_std_dev"};
  Differentiate(b_->AddNode("LayerNormalization", inputs, outputs)->output(0), {x});
  EXPECT_EQ(Count("LayerNormalization"), 1);
  EXPECT_EQ(Count("LayerNormalizationGrad"), 1);
}

// Without them, one backward LayerNormalization recomputes both.
TEST_F(NormalizationRulesTest, LayerNormalizationMissingStatisticsRecomputedOnce) {
  Value* x = Param("x", {2, 4});
  Differentiate(b_->Op("LayerNormalization", {x, Param("scale", {4})}, "y"), {x});
  EXPECT_EQ(Count("LayerNormalization"), 2);
  EXPECT_EQ(Count("LayerNormalizationGrad"), 1);
}

// Softmax-11 along its last axis needs no 2-D view; along axis 1 of three it does.
TEST_F(NormalizationRulesTest, SoftmaxOpset11FlattensOnlyBeforeTheLastAxis) {
  UseOpset(11);
  Value* x = Param("x", {2, 3, 4});
  Differentiate(b_->Op("Softmax", {x}, "y", {Attr("axis", 2)}), {x});
  EXPECT_EQ(Count("Flatten"), 0);
  UseOpset(11);
  x = Param("x", {2, 3, 4});
  Differentiate(b_->Op("Softmax", {x}, "y", {Attr("axis", 1)}), {x});
  EXPECT_EQ(Count("Flatten"), 2);
  EXPECT_EQ(Count("SoftmaxGrad_13"), 1);
}

// LayerNormalization without a bias.
TEST_F(NormalizationRulesTest, LayerNormalizationWithoutBias) {
  Check(b_->Op("LayerNormalization", {Param("x", {3, 5}), Param("scale", {5})}, "y"));
}

// Scale over both normalized axes and a bias broadcast over the first: the bias's gradient sums
// dY itself.
TEST_F(NormalizationRulesTest, LayerNormalizationBroadcastBias) {
  Check(b_->Op("LayerNormalization",
               {Param("x", {2, 3, 4}), Param("scale", {3, 4}), Param("b", {4})}, "y",
               {Attr("axis", -2)}));
}

// A scale broadcast over the normalized axes: the kernel sums its gradient.
TEST_F(NormalizationRulesTest, LayerNormalizationBroadcastScale) {
  Check(b_->Op("LayerNormalization", {Param("x", {2, 3, 4}), Param("scale", {1, 4})}, "y",
               {Attr("axis", 1)}));
}

// RMS normalization (com.microsoft) over the last axis, its inv_std_var recomputed.
TEST_F(NormalizationRulesTest, SimplifiedLayerNormalization) {
  Check(b_->Op({kMicrosoft, "SimplifiedLayerNormalization"},
               {Param("x", {2, 3, 4}), Param("scale", {4})}, "y"));
}

// RMS normalization over the last two axes with its inv_std_var output.
TEST_F(NormalizationRulesTest, SimplifiedLayerNormalizationUsesSavedStatistics) {
  Value* const inputs[] = {Param("x", {2, 3, 4}), Param("scale", {3, 4})};
  const std::string outputs[] = {"y", "inv_std_var"};
  Node* node =
      b_->AddNode({kMicrosoft, "SimplifiedLayerNormalization"}, inputs, outputs, {Attr("axis", 1)});
  Check(node->output(0));
}

}  // namespace
}  // namespace zerograph::autodiff
