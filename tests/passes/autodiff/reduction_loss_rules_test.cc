#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <span>
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

class ReductionLossRulesTest : public ::testing::Test {
 protected:
  ReductionLossRulesTest() { UseOpset(17); }

  // Starts a new graph importing `opset` of ONNX's default domain.
  void UseOpset(int64_t opset) {
    graph_ = std::make_unique<Graph>();
    b_.emplace(*graph_, opset);
  }
  // A float initializer of random values in [lo, hi) (a new seed each).
  Value* Param(std::string_view name, std::vector<int64_t> dims, float lo = -1.0f,
               float hi = 1.0f) {
    return Values(name, dims,
                  RandomValues(static_cast<size_t>(NumElements(dims)), seed_++, lo, hi));
  }
  Value* Values(std::string_view name, std::vector<int64_t> dims, std::span<const float> values) {
    return b_->Initializer(name, dims, values);
  }
  // Random values at least 0.1 from 0 with random signs: away from the kinks of |x| and the
  // poles of 1/x.
  Value* NonZeroParam(std::string_view name, std::vector<int64_t> dims) {
    std::vector<float> values =
        RandomValues(static_cast<size_t>(NumElements(dims)), seed_++, 0.1f, 1.0f);
    const std::vector<float> signs = RandomValues(values.size(), seed_++);
    for (size_t i = 0; i < values.size(); ++i) values[i] *= signs[i] < 0 ? -1.0f : 1.0f;
    return Values(name, dims, values);
  }
  // Distinct values 0.1 apart in random order: no ties, and no finite-difference step crosses
  // from one maximum to another.
  Value* DistinctParam(std::string_view name, std::vector<int64_t> dims) {
    std::vector<float> values(static_cast<size_t>(NumElements(dims)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1f * static_cast<float>(i) - 1.0f;
    std::shuffle(values.begin(), values.end(), std::mt19937(seed_++));
    return Values(name, dims, values);
  }
  Value* Int64s(std::string_view name, std::vector<int64_t> dims, std::vector<int64_t> values) {
    return graph_->AddInitializer(name, DataType::kInt64, dims,
                                  std::as_bytes(std::span<const int64_t>(values)));
  }
  Value* Reduce(std::string_view op, Value* x, std::initializer_list<Attr> attrs = {}) {
    return b_->Op(op, {x}, "y", attrs);
  }
  Value* Reduce(std::string_view op, Value* x, Value* axes,
                std::initializer_list<Attr> attrs = {}) {
    return b_->Op(op, {x, axes}, "y", attrs);
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
  void Check(Value* output, const GradientCheckOptions& options = {}) {
    b_->Output(output);
    ExpectGradientsMatchFiniteDifferences(std::move(graph_), options);
  }

  std::unique_ptr<Graph> graph_;
  std::optional<GraphBuilder> b_;
  uint32_t seed_ = 30;
};

// --- Reductions ---------------------------------------------------------------------------------

// ReduceSum-13, axes as an input, keepdims 0: dY is unsqueezed, then expanded.
TEST_F(ReductionLossRulesTest, ReduceSumAxesInputNoKeepDims) {
  Check(
      Reduce("ReduceSum", Param("x", {2, 3, 4}), Int64s("axes", {1}, {1}), {Attr("keepdims", 0)}));
}

// ReduceSum-11, two axes as an attribute, keepdims 1.
TEST_F(ReductionLossRulesTest, ReduceSumOpset11AxesAttribute) {
  UseOpset(11);
  Check(Reduce("ReduceSum", Param("x", {2, 3, 4}), {Attr("axes", std::vector<int64_t>{0, 2})}));
}

// ReduceSum-11 with a negative axis, keepdims 0: Unsqueeze-11 takes the axis as an attribute.
TEST_F(ReductionLossRulesTest, ReduceSumOpset11NegativeAxisNoKeepDims) {
  UseOpset(11);
  Check(Reduce("ReduceSum", Param("x", {2, 3, 4}),
               {Attr("axes", std::vector<int64_t>{-1}), Attr("keepdims", 0)}));
}

// ReduceSum-13 without axes and keepdims 0: a scalar, dY reshaped to all ones.
TEST_F(ReductionLossRulesTest, ReduceSumAllAxesToScalar) {
  Check(Reduce("ReduceSum", Param("x", {2, 3}), {Attr("keepdims", 0)}));
}

// noop_with_empty_axes with no axes: Y is X, and so dX is dY.
TEST_F(ReductionLossRulesTest, ReduceSumNoopWithEmptyAxes) {
  Check(Reduce("ReduceSum", Param("x", {2, 3}), {Attr("noop_with_empty_axes", 1)}));
}

// ReduceMean-13 (axes attribute) over the middle axis, keepdims 1.
TEST_F(ReductionLossRulesTest, ReduceMeanAxesAttribute) {
  Check(Reduce("ReduceMean", Param("x", {2, 3, 4}), {Attr("axes", std::vector<int64_t>{1})}));
}

// ReduceMean-18, a negative axis as an input, keepdims 0.
TEST_F(ReductionLossRulesTest, ReduceMeanOpset18NegativeAxesInput) {
  UseOpset(18);
  Check(Reduce("ReduceMean", Param("x", {2, 3, 4}), Int64s("axes", {2}, {-1, 0}),
               {Attr("keepdims", 0)}));
}

// ReduceMean-11 over every axis.
TEST_F(ReductionLossRulesTest, ReduceMeanOpset11AllAxes) {
  UseOpset(11);
  Check(Reduce("ReduceMean", Param("x", {2, 3, 4}), {Attr("keepdims", 0)}));
}

TEST_F(ReductionLossRulesTest, ReduceSumSquare) {
  Check(Reduce("ReduceSumSquare", Param("x", {2, 3, 4}),
               {Attr("axes", std::vector<int64_t>{-1}), Attr("keepdims", 0)}));
}

// ReduceL1 with inputs away from the kink at 0.
TEST_F(ReductionLossRulesTest, ReduceL1) {
  Check(Reduce("ReduceL1", NonZeroParam("x", {2, 3, 4}), {Attr("axes", std::vector<int64_t>{1})}));
}

TEST_F(ReductionLossRulesTest, ReduceL2) {
  Check(Reduce("ReduceL2", Param("x", {2, 3, 4}),
               {Attr("axes", std::vector<int64_t>{0, 2}), Attr("keepdims", 0)}));
}

// ReduceLogSum of positive inputs.
TEST_F(ReductionLossRulesTest, ReduceLogSum) {
  Check(Reduce("ReduceLogSum", Param("x", {2, 3, 4}, 0.5f, 1.5f),
               {Attr("axes", std::vector<int64_t>{1}), Attr("keepdims", 0)}));
}

// ReduceLogSumExp-18, axes as an input.
TEST_F(ReductionLossRulesTest, ReduceLogSumExpOpset18) {
  UseOpset(18);
  Check(Reduce("ReduceLogSumExp", Param("x", {2, 3, 4}), Int64s("axes", {1}, {1}),
               {Attr("keepdims", 0)}));
}

// ReduceMax of distinct values: dY goes to each row's maximum.
TEST_F(ReductionLossRulesTest, ReduceMax) {
  Check(Reduce("ReduceMax", DistinctParam("x", {2, 3, 4}),
               {Attr("axes", std::vector<int64_t>{1}), Attr("keepdims", 0)}));
}

// ReduceMax-18 over two axes given as an input, keepdims 1.
TEST_F(ReductionLossRulesTest, ReduceMaxOpset18AxesInput) {
  UseOpset(18);
  Check(Reduce("ReduceMax", DistinctParam("x", {2, 3, 4}), Int64s("axes", {2}, {0, 2})));
}

// ReduceMin-11 over every axis.
TEST_F(ReductionLossRulesTest, ReduceMinOpset11AllAxes) {
  UseOpset(11);
  Check(Reduce("ReduceMin", DistinctParam("x", {3, 4}), {Attr("keepdims", 0)}));
}

// ReduceProd of inputs away from 0.
TEST_F(ReductionLossRulesTest, ReduceProd) {
  Check(Reduce("ReduceProd", NonZeroParam("x", {2, 3, 4}),
               {Attr("axes", std::vector<int64_t>{-1}), Attr("keepdims", 0)}));
}

// --- Losses -------------------------------------------------------------------------------------

// The losses' weights get no gradient (labels are integers): the check keeps them constant.
GradientCheckOptions SkipWeights() {
  GradientCheckOptions options;
  options.skip = {"weights"};
  return options;
}

// SoftmaxCrossEntropyLoss, scores [N, C], mean.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropyMean) {
  Check(b_->Op("SoftmaxCrossEntropyLoss",
               {Param("scores", {4, 5}), Int64s("labels", {4}, {0, 3, 4, 1})}, "loss"));
}

// Scores [N, C, d1] as a GPT's logits [batch, vocab, seq], one position ignored, weights, mean
// (divided by the weights of the labels not ignored).
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropy3DIgnoreIndexWeights) {
  Check(b_->Op("SoftmaxCrossEntropyLoss",
               {Param("scores", {2, 5, 3}), Int64s("labels", {2, 3}, {0, 4, -100, 2, 2, 1}),
                Param("weights", {5}, 0.5f, 1.5f)},
               "loss", {Attr("ignore_index", -100)}),
        SkipWeights());
}

// Reduction sum, K = 2 spatial dims.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropySum4D) {
  Check(
      b_->Op("SoftmaxCrossEntropyLoss",
             {Param("scores", {2, 3, 2, 2}), Int64s("labels", {2, 2, 2}, {0, 1, 2, 0, 2, 2, 1, 0})},
             "loss", {Attr("reduction", "sum")}));
}

// Reduction none: a loss per sample, with an ignored label.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropyNoneIgnoreIndex) {
  Check(b_->Op("SoftmaxCrossEntropyLoss",
               {Param("scores", {2, 4, 3}), Int64s("labels", {2, 3}, {3, 1, 0, 2, 0, 3})}, "loss",
               {Attr("reduction", "none"), Attr("ignore_index", 0)}));
}

// log_prob is an output the graph reads too: the scores' gradient sums both paths.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropyLogProbAlsoRead) {
  Value* const inputs[] = {Param("scores", {3, 4, 2}),
                           Int64s("labels", {3, 2}, {1, 0, 3, 3, 2, 1})};
  const std::string outputs[] = {"loss", "log_prob"};
  Node* loss = b_->AddNode("SoftmaxCrossEntropyLoss", inputs, outputs);
  b_->Output(loss->output(1));
  Check(loss->output(0));
}

// Only log_prob reaches the function; the loss output is unused.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropyOnlyLogProbRead) {
  Value* const inputs[] = {Param("scores", {3, 4}), Int64s("labels", {3}, {1, 0, 3})};
  const std::string outputs[] = {"loss", "log_prob"};
  Check(b_->AddNode("SoftmaxCrossEntropyLoss", inputs, outputs)->output(1));
}

// The forward's log_prob output is read, not recomputed; without it a second
// SoftmaxCrossEntropyLoss makes it.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropyRecomputesLogProbOnlyWhenMissing) {
  Value* scores = Param("scores", {3, 4});
  Value* const inputs[] = {scores, Int64s("labels", {3}, {1, 0, 3})};
  const std::string outputs[] = {"loss", "log_prob"};
  Differentiate(b_->AddNode("SoftmaxCrossEntropyLoss", inputs, outputs)->output(0), {scores});
  EXPECT_EQ(Count("SoftmaxCrossEntropyLoss"), 1);
  EXPECT_EQ(Count("SoftmaxCrossEntropyLossGrad"), 1);
  UseOpset(17);
  scores = Param("scores", {3, 4});
  Differentiate(
      b_->Op("SoftmaxCrossEntropyLoss", {scores, Int64s("labels", {3}, {1, 0, 3})}, "loss"),
      {scores});
  EXPECT_EQ(Count("SoftmaxCrossEntropyLoss"), 2);
}

// SoftmaxCrossEntropyLoss-12 on 3-D scores, its log_prob recomputed at opset 12.
TEST_F(ReductionLossRulesTest, SoftmaxCrossEntropyOpset12) {
  UseOpset(12);
  Check(b_->Op("SoftmaxCrossEntropyLoss",
               {Param("scores", {2, 3, 2}), Int64s("labels", {2, 2}, {2, 0, 1, 1})}, "loss"));
}

// NegativeLogLikelihoodLoss, mean over [N, C].
TEST_F(ReductionLossRulesTest, NegativeLogLikelihoodMean) {
  Check(b_->Op("NegativeLogLikelihoodLoss",
               {Param("input", {4, 5}), Int64s("target", {4}, {0, 3, 4, 1})}, "loss"));
}

// [N, C, d1] with weights and an ignored target, mean.
TEST_F(ReductionLossRulesTest, NegativeLogLikelihood3DIgnoreIndexWeights) {
  Check(b_->Op("NegativeLogLikelihoodLoss",
               {Param("input", {2, 5, 3}), Int64s("target", {2, 3}, {0, 4, -1, 2, 2, 1}),
                Param("weights", {5}, 0.5f, 1.5f)},
               "loss", {Attr("ignore_index", -1)}),
        SkipWeights());
}

// Reductions sum and none.
TEST_F(ReductionLossRulesTest, NegativeLogLikelihoodSumAndNone) {
  for (const char* reduction : {"sum", "none"}) {
    SCOPED_TRACE(reduction);
    UseOpset(17);
    Check(b_->Op("NegativeLogLikelihoodLoss",
                 {Param("input", {2, 3, 2}), Int64s("target", {2, 2}, {2, 0, 1, 1})}, "loss",
                 {Attr("reduction", reduction)}));
  }
}

}  // namespace
}  // namespace zerograph::autodiff
