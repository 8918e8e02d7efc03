#include "passes/autodiff/gradient_check.h"

#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/shape_inference.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"
#include "zerograph/passes/autodiff.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::autodiff {
namespace {

// An initializer turned into a graph input, so that each run can perturb it.
struct Parameter {
  std::string name;  // the initializer's, for messages
  Value* input = nullptr;
  std::vector<float> values;
  Value* grad = nullptr;
};

std::vector<float> ToFloats(std::span<const std::byte> bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// The checked function: the graph's outputs, their weights R, and f = Σ_outputs Σ(output ⊙ R),
// which replaces them as the graph's output. Its backward is seeded with R at each output, so
// that f's own nodes need no gradient rule.
struct WeightedSum {
  std::vector<Value*> outputs;
  std::vector<Value*> weights;
  Value* f = nullptr;
};

WeightedSum AppendWeightedSum(Graph& graph, const GradientCheckOptions& options) {
  WeightedSum sum;
  StatusOr<InferredShapes> shapes = InferShapes(graph);
  EXPECT_TRUE(shapes.ok()) << shapes.status().message();
  if (!shapes.ok()) return sum;
  GraphBuilder b(graph);
  std::vector<Value*> terms;
  uint32_t seed = options.seed;
  for (Value* output : std::vector<Value*>(graph.outputs())) {
    const TensorSpec* spec = shapes->Find(*output);
    EXPECT_NE(spec, nullptr) << "graph output '" << output->name() << "' has no static shape";
    if (spec == nullptr) return sum;
    const std::vector<float> weights = RandomValues(
        static_cast<size_t>(TensorType{spec->dtype, spec->shape}.numel().value()), seed++);
    Value* r = b.Initializer(StrCat(output->name(), "_weights"), spec->shape, weights);
    terms.push_back(
        b.Op("ReduceSum", {b.Op("Mul", {output, r}, "weighted")}, "term", {Attr("keepdims", 0)}));
    sum.outputs.push_back(output);
    sum.weights.push_back(r);
  }
  graph.EraseOutputsIf([](const Value*) { return true; });
  const std::string names[] = {"f"};
  sum.f = terms.size() == 1 ? terms[0] : b.AddNode("Sum", terms, names)->output(0);
  return sum;
}

}  // namespace

std::vector<float> RandomValues(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(engine);
  return values;
}

void ExpectGradientsMatchFiniteDifferences(std::unique_ptr<Graph> graph,
                                           const GradientCheckOptions& options) {
  for (const Value* input : graph->inputs()) {
    ASSERT_NE(input->initializer(), nullptr)
        << "graph input '" << input->name() << "': give the checked graph initializers only";
  }
  std::vector<Parameter> params;
  for (Value* init : graph->initializers()) {
    const Tensor& tensor = *init->initializer();
    if (tensor.dtype() != DataType::kFloat32 || options.skip.contains(std::string(init->name()))) {
      continue;
    }
    StatusOr<std::span<const std::byte>> bytes = tensor.Bytes();
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    Parameter p{std::string(init->name()), nullptr, ToFloats(*bytes), nullptr};
    const std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
    p.input = graph->AddInput(graph->UniqueValueName(StrCat(p.name, "_in")),
                              TensorType{DataType::kFloat32, dims});
    graph->ReplaceAllUsesWith(init, p.input);
    ASSERT_TRUE(graph->EraseInitializer(init).ok());
    params.push_back(std::move(p));
  }
  ASSERT_FALSE(params.empty()) << "no float initializer to differentiate";
  const WeightedSum sum = AppendWeightedSum(*graph, options);
  ASSERT_NE(sum.f, nullptr);
  Value* f = sum.f;

  std::vector<Value*> wrt;
  for (const Parameter& p : params) wrt.push_back(p.input);
  StatusOr<std::vector<Value*>> grads = AppendBackward(*graph, sum.outputs, sum.weights, wrt);
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  graph->AddOutput(f);
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].grad = (*grads)[i];
    if (params[i].grad != nullptr) graph->AddOutput(params[i].grad);
  }

  runtime::KernelRegistry registry;
  ASSERT_TRUE(runtime::RegisterCpuKernels(registry).ok());
  std::unique_ptr<runtime::Device> device = runtime::CreateCpuDevice();
  std::unique_ptr<runtime::Communicator> comm = runtime::CreateLocalCommunicator();
  runtime::ExecutorOptions executor_options;
  executor_options.bind_state = false;
  StatusOr<std::unique_ptr<runtime::Executor>> created =
      runtime::Executor::Create(*graph, *device, *comm, registry, std::move(executor_options));
  ASSERT_TRUE(created.ok()) << created.status().message();
  runtime::Executor& executor = **created;

  auto set = [&](const Parameter& p, std::span<const float> values) {
    ASSERT_TRUE(executor.SetInput(p.input->name(), std::as_bytes(values)).ok());
  };
  // Every run at step 0: Dropout draws the same mask in each, so f is a function of the values.
  auto run = [&]() -> double {
    Status ran = executor.Run(/*step=*/0);
    EXPECT_TRUE(ran.ok()) << ran.message();
    StatusOr<std::vector<std::byte>> value = executor.Fetch(f->name());
    EXPECT_TRUE(value.ok()) << value.status().message();
    return value.ok() ? ToFloats(*value)[0] : NAN;
  };
  for (const Parameter& p : params) set(p, p.values);
  run();
  std::vector<std::vector<float>> analytic;
  for (const Parameter& p : params) {
    if (p.grad == nullptr) {
      analytic.emplace_back(p.values.size(), 0.0f);
      continue;
    }
    StatusOr<std::vector<std::byte>> bytes = executor.Fetch(p.grad->name());
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    analytic.push_back(ToFloats(*bytes));
    ASSERT_EQ(analytic.back().size(), p.values.size()) << "gradient of '" << p.name << "'";
  }

  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = params[i];
    std::vector<float> perturbed = p.values;
    int failures = 0;
    for (size_t e = 0; e < p.values.size(); ++e) {
      perturbed[e] = p.values[e] + options.step;
      set(p, perturbed);
      const double plus = run();
      perturbed[e] = p.values[e] - options.step;
      set(p, perturbed);
      const double minus = run();
      perturbed[e] = p.values[e];
      const double numeric = (plus - minus) / (2.0 * options.step);
      const double got = analytic[i][e];
      const double allowed = options.atol + options.rtol * std::abs(numeric);
      if (std::abs(got - numeric) > allowed && ++failures <= 5) {
        ADD_FAILURE() << "d f / d '" << p.name << "'[" << e << "]: autodiff " << got
                      << ", finite differences " << numeric
                      << (p.grad == nullptr ? " (autodiff found no path)" : "");
      }
    }
    set(p, p.values);
    EXPECT_EQ(failures, 0) << "'" << p.name << "': " << failures << " of " << p.values.size()
                           << " elements differ";
  }
}

}  // namespace zerograph::autodiff
