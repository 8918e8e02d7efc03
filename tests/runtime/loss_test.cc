#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::NumericGradient;
using testing::Values;

constexpr const char* kMicrosoft = "com.microsoft";

struct LossCase {
  Shape scores;  // [N, C, d...]
  std::string reduction;
  bool weights;
  std::optional<int64_t> ignore_index;
};

// The cases every loss test walks: each reduction, with and without weights and an ignored
// label, 2-D and K-dimensional scores.
std::vector<LossCase> Cases() {
  std::vector<LossCase> cases;
  for (const Shape& shape : {Shape{5, 4}, Shape{3, 4, 2, 3}}) {
    for (const char* reduction : {"none", "sum", "mean"}) {
      for (bool weights : {false, true}) {
        for (std::optional<int64_t> ignore :
             {std::optional<int64_t>(), std::optional<int64_t>(2)}) {
          cases.push_back({shape, reduction, weights, ignore});
        }
      }
    }
  }
  return cases;
}

std::string Describe(const LossCase& c) {
  return ShapeToString(c.scores) + " " + c.reduction + (c.weights ? " weights" : "") +
         (c.ignore_index ? " ignore " + std::to_string(*c.ignore_index) : "");
}

Shape LabelShape(const Shape& scores) {
  Shape labels = {scores[0]};
  labels.insert(labels.end(), scores.begin() + 2, scores.end());
  return labels;
}

// Labels 0..C-1 in turn, so that ignore_index 2 hits some samples.
std::vector<double> Labels(const Shape& scores) {
  std::vector<double> labels(static_cast<size_t>(NumElements(LabelShape(scores))));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<double>((i * 7 + 1) % 4);
  return labels;
}

// The ONNX reference in double: loss (per sample or reduced) and log_prob.
struct Reference {
  std::vector<double> loss;
  std::vector<double> log_prob;
};
Reference ReferenceLoss(const LossCase& c, const std::vector<double>& x,
                        const std::vector<double>& labels, const std::vector<double>& weights,
                        bool softmax) {
  const int64_t n = c.scores[0], classes = c.scores[1];
  const int64_t d = NumElements(c.scores) / (n * classes);
  Reference r;
  r.log_prob = x;
  std::vector<double> per_sample;
  double total = 0, weight_total = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      auto at = [&](int64_t cls) { return static_cast<size_t>((i * classes + cls) * d + j); };
      if (softmax) {
        double sum = 0;
        for (int64_t cls = 0; cls < classes; ++cls) sum += std::exp(x[at(cls)]);
        for (int64_t cls = 0; cls < classes; ++cls)
          r.log_prob[at(cls)] = x[at(cls)] - std::log(sum);
      }
      const auto label = static_cast<int64_t>(labels[static_cast<size_t>(i * d + j)]);
      const bool ignored = c.ignore_index && label == *c.ignore_index;
      const double w = ignored ? 0 : (c.weights ? weights[static_cast<size_t>(label)] : 1);
      const double l = ignored ? 0 : -r.log_prob[at(label)] * w;
      per_sample.push_back(l);
      total += l;
      weight_total += w;
    }
  }
  if (c.reduction == "none") r.loss = per_sample;
  if (c.reduction == "sum") r.loss = {total};
  if (c.reduction == "mean") r.loss = {total / weight_total};
  return r;
}

std::vector<Attr> LossAttrs(const LossCase& c) {
  std::vector<Attr> attrs = {Attr("reduction", c.reduction)};
  if (c.ignore_index) attrs.push_back(Attr("ignore_index", *c.ignore_index));
  return attrs;
}

// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss against ONNX's reference, for fp64, fp32
// and fp16 scores and both label types.
TEST(LossTest, ForwardMatchesOnnxReference) {
  KernelRunner runner;
  uint32_t seed = 1;
  for (const LossCase& c : Cases()) {
    for (DataType dtype : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16}) {
      for (DataType label_type : {DataType::kInt64, DataType::kInt32}) {
        const std::string what = Describe(c) + " " + std::string(DataTypeName(dtype));
        DeviceTensor x = runner.Random(dtype, c.scores, seed++, -2, 2);
        DeviceTensor labels = runner.MakeTensor(label_type, LabelShape(c.scores), Labels(c.scores));
        DeviceTensor weights =
            c.weights ? runner.Random(dtype, {c.scores[1]}, seed++, 0.5, 2) : DeviceTensor();
        const double tol = dtype == DataType::kFloat16 ? 4e-3 : 1e-6;
        const Reference sce =
            ReferenceLoss(c, Values(x), Values(labels),
                          c.weights ? Values(weights) : std::vector<double>{}, true);
        auto out = runner.Run("", "SoftmaxCrossEntropyLoss", {x, labels, weights}, 2, LossAttrs(c));
        ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
        ExpectNear(Values((*out)[0]), sce.loss, tol, tol, what + " loss");
        ExpectNear(Values((*out)[1]), sce.log_prob, tol, tol, what + " log_prob");

        const Reference nll =
            ReferenceLoss(c, Values(x), Values(labels),
                          c.weights ? Values(weights) : std::vector<double>{}, false);
        out = runner.Run("", "NegativeLogLikelihoodLoss", {x, labels, weights}, 1, LossAttrs(c));
        ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
        ExpectNear(Values((*out)[0]), nll.loss, tol, tol, what + " nll");
      }
    }
  }
}

// The Internal op takes ignore_index as an input and may write the loss in another dtype.
TEST(LossTest, InternalTakesIgnoreIndexInputAndOutputType) {
  KernelRunner runner;
  const LossCase c{{4, 5, 3}, "mean", true, 1};
  DeviceTensor x = runner.Random(DataType::kFloat16, c.scores, 7, -2, 2);
  DeviceTensor labels = runner.MakeTensor(DataType::kInt64, LabelShape(c.scores), Labels(c.scores));
  DeviceTensor weights = runner.Random(DataType::kFloat16, {5}, 8, 0.5, 2);
  DeviceTensor ignore = runner.MakeTensor(DataType::kInt64, {}, {1});
  auto out = runner.Run(kMicrosoft, "SoftmaxCrossEntropyLossInternal", {x, labels, weights, ignore},
                        2, {Attr("reduction", "mean"), Attr("output_type", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DataType::kFloat32);
  EXPECT_EQ((*out)[1].dtype(), DataType::kFloat16);
  const Reference r = ReferenceLoss(c, Values(x), Values(labels), Values(weights), true);
  ExpectNear(Values((*out)[0]), r.loss, 1e-5, 1e-6, "fp32 loss of fp16 scores");
}

// ONNX Runtime's loss ops ignore label -1 by default, as its kernels do; ONNX's refuse it.
TEST(LossTest, MicrosoftOpsIgnoreMinusOneByDefault) {
  KernelRunner runner;
  DeviceTensor x = runner.Random(DataType::kFloat64, {3, 4}, 1);
  DeviceTensor labels = runner.MakeTensor(DataType::kInt64, {3}, {1, -1, 2});
  auto out = runner.Run(kMicrosoft, "SoftmaxCrossEntropyLossInternal", {x, labels}, 2,
                        {Attr("reduction", "none")});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0])[1], 0.0);
  DeviceTensor dy = runner.MakeTensor(DataType::kFloat64, {3}, {1, 1, 1});
  auto grad = runner.Run(kMicrosoft, "SoftmaxCrossEntropyLossGrad", {dy, (*out)[1], labels}, 1,
                         {Attr("reduction", "none")});
  ASSERT_TRUE(grad.ok()) << grad.status().ToString();
  for (int c = 0; c < 4; ++c) EXPECT_EQ(Values((*grad)[0])[4 + static_cast<size_t>(c)], 0.0);
  EXPECT_FALSE(runner.Run("", "SoftmaxCrossEntropyLoss", {x, labels}, 1).ok());
}

// A label outside [0, C) that is not ignored is an error naming it.
TEST(LossTest, LabelOutOfRangeIsRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.Random(DataType::kFloat32, {2, 3}, 1);
  DeviceTensor labels = runner.MakeTensor(DataType::kInt64, {2}, {0, 3});
  auto out = runner.Run("", "SoftmaxCrossEntropyLoss", {x, labels}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("label 3"), std::string_view::npos)
      << out.status().ToString();
}

// SoftmaxCrossEntropyLossGrad (and the Internal grad, with its bias) against central differences
// of the forward kernel in double: d/dx of sum(dY · loss).
TEST(LossTest, GradientsMatchFiniteDifferencesOfForward) {
  KernelRunner runner;
  uint32_t seed = 500;
  for (const LossCase& c : Cases()) {
    for (bool internal : {false, true}) {
      const std::string what = Describe(c) + (internal ? " internal" : "");
      DeviceTensor x = runner.Random(DataType::kFloat64, c.scores, seed++, -2, 2);
      DeviceTensor labels =
          runner.MakeTensor(DataType::kInt64, LabelShape(c.scores), Labels(c.scores));
      DeviceTensor weights = c.weights
                                 ? runner.Random(DataType::kFloat64, {c.scores[1]}, seed++, 0.5, 2)
                                 : DeviceTensor();
      DeviceTensor ignore = c.ignore_index && internal
                                ? runner.MakeTensor(DataType::kInt64, {}, {double(*c.ignore_index)})
                                : DeviceTensor();
      const Shape dy_shape = c.reduction == "none" ? LabelShape(c.scores) : Shape{};
      DeviceTensor dy = runner.Random(DataType::kFloat64, dy_shape, seed++, 0.5, 1.5);
      const std::vector<double> vdy = Values(dy);
      const std::vector<Attr> attrs =
          internal ? std::vector<Attr>{Attr("reduction", c.reduction)} : LossAttrs(c);
      const char* domain = internal ? kMicrosoft : "";
      const char* forward =
          internal ? "SoftmaxCrossEntropyLossInternal" : "SoftmaxCrossEntropyLoss";
      std::vector<DeviceTensor> forward_inputs = {x, labels, weights};
      if (internal) forward_inputs.push_back(ignore);
      auto out = runner.Run(domain, forward, forward_inputs, 2, attrs);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      const DeviceTensor log_prob = (*out)[1];

      auto f = [&](const std::vector<double>& values) {
        std::vector<DeviceTensor> inputs = forward_inputs;
        inputs[0] = runner.MakeTensor(DataType::kFloat64, c.scores, values);
        auto loss = runner.Run(domain, forward, inputs, 1, attrs);
        EXPECT_TRUE(loss.ok()) << loss.status().ToString();
        const std::vector<double> l = Values((*loss)[0]);
        double sum = 0;
        for (size_t i = 0; i < l.size(); ++i) sum += vdy[i] * l[i];
        return sum;
      };
      std::vector<double> expected = NumericGradient(f, Values(x));

      std::vector<DeviceTensor> grad_inputs = {dy, log_prob, labels, weights};
      if (internal) {
        DeviceTensor bias = runner.Random(DataType::kFloat64, c.scores, seed++);
        grad_inputs.push_back(ignore);
        grad_inputs.push_back(bias);
        const std::vector<double> vb = Values(bias);
        for (size_t i = 0; i < expected.size(); ++i) expected[i] += vb[i];
      }
      const char* grad =
          internal ? "SoftmaxCrossEntropyLossInternalGrad" : "SoftmaxCrossEntropyLossGrad";
      auto d_logits = runner.Run(kMicrosoft, grad, grad_inputs, 1, attrs);
      ASSERT_TRUE(d_logits.ok()) << what << ": " << d_logits.status().ToString();
      // Central differences with h = 1e-6 in double: error ~1e-9 relative to the loss.
      ExpectNear(Values((*d_logits)[0]), expected, 1e-6, 1e-7, what);
    }
  }
}

}  // namespace
}  // namespace zerograph::runtime
