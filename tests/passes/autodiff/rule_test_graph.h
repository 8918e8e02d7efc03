#ifndef ZEROGRAPH_TESTS_PASSES_AUTODIFF_RULE_TEST_GRAPH_H_
#define ZEROGRAPH_TESTS_PASSES_AUTODIFF_RULE_TEST_GRAPH_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"

namespace zerograph::autodiff {

// A fixture for the gradient-rule tests: a small graph of one opset, its float inputs as
// initializers of random values (each a new seed), integer and bool inputs as initializers of
// given values, and a check of every float initializer's gradient against finite differences.
class RuleTest : public ::testing::Test {
 protected:
  RuleTest() { NewGraph(17); }

  // Starts over with a graph importing `opset` (for older versions of an op).
  void NewGraph(int64_t opset) {
    graph_ = std::make_unique<Graph>();
    b_ = std::make_unique<GraphBuilder>(*graph_, opset);
  }
  GraphBuilder& b() { return *b_; }

  // Uniform in [lo, hi).
  Value* Param(std::string_view name, std::vector<int64_t> dims, float lo = -1.0f,
               float hi = 1.0f) {
    return b_->Initializer(name, dims, Random(dims, lo, hi));
  }
  // Magnitudes in [lo, hi) with random signs: away from the kinks at 0 (Relu, Abs).
  Value* AwayFromZero(std::string_view name, std::vector<int64_t> dims, float lo = 0.2f,
                      float hi = 1.0f) {
    std::vector<float> values = Random(dims, lo, hi);
    const std::vector<float> signs = Random(dims, -1.0f, 1.0f);
    for (size_t i = 0; i < values.size(); ++i) values[i] = signs[i] < 0 ? -values[i] : values[i];
    return b_->Initializer(name, dims, values);
  }
  Value* Ints(std::string_view name, std::vector<int64_t> dims, std::vector<int64_t> values) {
    return graph_->AddInitializer(name, DataType::kInt64, dims, std::as_bytes(std::span(values)));
  }
  Value* Bools(std::string_view name, std::vector<int64_t> dims, std::vector<bool> values) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return graph_->AddInitializer(name, DataType::kBool, dims, std::as_bytes(std::span(bytes)));
  }
  Value* Op(OpName op, std::initializer_list<Value*> inputs,
            std::initializer_list<Attr> attrs = {}) {
    return b_->Op(op, inputs, "t", attrs);
  }

  // Check's options: `skip` stays undifferentiated (an op's bounds or ratio), `step` is the finite
  // difference's.
  static GradientCheckOptions Options(std::initializer_list<std::string> skip,
                                      float step = GradientCheckOptions{}.step) {
    GradientCheckOptions options;
    options.skip = skip;
    options.step = step;
    return options;
  }

  // Makes `output` a graph output and checks the gradients of every float initializer.
  void Check(Value* output, const GradientCheckOptions& options = {}) {
    b_->Output(output);
    ExpectGradientsMatchFiniteDifferences(std::move(graph_), options);
  }

 private:
  std::vector<float> Random(const std::vector<int64_t>& dims, float lo, float hi) {
    return RandomValues(static_cast<size_t>(NumElements(dims)), seed_++, lo, hi);
  }

  std::unique_ptr<Graph> graph_;
  std::unique_ptr<GraphBuilder> b_;
  uint32_t seed_ = 100;
};

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_TESTS_PASSES_AUTODIFF_RULE_TEST_GRAPH_H_
